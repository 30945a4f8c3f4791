/**
 * A pattern's literal text in the form a request path carries it: RFC 3986 normal form, with
 * characters outside the BMP encoded whole and half surrogate pairs refused.
 */
import { FwError } from '../errors.js'
import { patternError } from './errors.js'

// RFC 3986 pchar minus '%' (handled separately) — everything else in a literal is percent-encoded.
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/
const UNRESERVED = /^[A-Za-z0-9\-._~]$/

/** Percent-encodes what a client would encode, keeping valid `%XX` escapes (uppercased). */
export function encodeLiteral(pattern: string, raw: string, domain: boolean): string {
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string
    if (c === '%') {
      const hex = raw.slice(i + 1, i + 3)
      if (!/^[0-9A-Fa-f]{2}$/.test(hex))
        throw patternError(pattern, `has a malformed escape "%${hex}"`, domain)
      // RFC 3986 normal form, as the matcher normalizes request paths: `%41` is `A`, `%c3` is `%C3`.
      const char = String.fromCharCode(parseInt(hex, 16))
      out += UNRESERVED.test(char) ? char : '%' + hex.toUpperCase()
      i += 2
    } else if (isSurrogate(c.charCodeAt(0))) {
      // A character outside the BMP (an emoji) is two UTF-16 units: encode them together.
      const pair = raw.slice(i, i + 2)
      if (pair.codePointAt(0)! <= 0xffff) throw loneSurrogate(pattern, c, domain)
      out += encodeURIComponent(pair)
      i++
    } else {
      out += PCHAR.test(c) ? c : encodeURIComponent(c)
    }
  }
  return out
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff
}

function loneSurrogate(pattern: string, unit: string, domain: boolean): FwError {
  const code = unit.charCodeAt(0).toString(16).toUpperCase()
  const shown = pattern.replace(LONE_SURROGATE, '\ufffd')
  return new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${shown}" has half a UTF-16 surrogate pair (\\u${code}), which is not a character`,
    {
      hint: domain
        ? 'Write the whole character, or the label in its ASCII (punycode) form.'
        : 'Write the whole character, or its UTF-8 escapes (😀 is %F0%9F%98%80).',
    },
  )
}
