/** Tolerant Cookie header parsing: a malformed pair is skipped, never an error. */
import { emptyParams, FORBIDDEN_KEYS, type Params } from './params.js'

/**
 * Parses `a=1; b="two"` into a map. The first occurrence of a name wins (RFC 6265 orders the
 * most specific path first); values are percent-decoded when that decodes cleanly.
 * @example
 * parseCookies('sid=abc%20d; theme=dark') // { sid: 'abc d', theme: 'dark' }
 */
export function parseCookies(header: string): Params {
  const cookies = emptyParams()
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    const name = part.slice(0, eq).trim()
    if (name === '' || FORBIDDEN_KEYS.has(name) || Object.hasOwn(cookies, name)) continue
    cookies[name] = decodeValue(part.slice(eq + 1).trim())
  }
  return cookies
}

function decodeValue(raw: string): string {
  const value = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}
