/**
 * Domain patterns as the compiler keeps them: literal labels in the form clients send in the
 * Host header.
 */
import { domainToASCII } from 'node:url'
import { FwError } from '../shared/errors.js'
import { parseHost, type Segment } from '../shared/pattern.js'

/**
 * A domain pattern's segments with its literal labels as clients send them in the Host header:
 * an internationalised label in its ASCII (punycode) form, `café` → `xn--caf-dma`, so that it
 * matches, and so that urlFor builds the host a URL may hold.
 * @example
 * asciiHost('{tenant}.café.example') // the segments of {tenant}.xn--caf-dma.example
 */
export function asciiHost(pattern: string): Segment[] {
  return parseHost(pattern).map((segment) => {
    if (segment.kind !== 'static') return segment
    if (!/[^\x00-\x7f]/.test(segment.value)) return checkLabel(pattern, segment)
    const value = domainToASCII(segment.value)
    if (value === '') {
      throw new FwError(
        'FW_PATTERN_INVALID',
        `Pattern "${pattern}": "${segment.value}" is not a valid internationalised domain label`,
        {
          hint: 'Write the domain as a browser would accept it, e.g. café.example or xn--caf-dma.example.',
        },
      )
    }
    return { kind: 'static' as const, value }
  })
}

// What a label of the Host holds as routing accepts it (letters, digits, '-', '_'), lowercased.
const LABEL = /^[a-z0-9_-]+$/

/** A literal label no Host can carry (`ex ample`, `a+b`) is an error: its route never matched. */
function checkLabel(pattern: string, segment: Segment & { kind: 'static' }): Segment {
  if (LABEL.test(segment.value)) return segment
  throw new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${pattern}": the label "${segment.value}" holds a character no Host can: a label is letters, digits, "-" and "_"`,
    { hint: 'Write the host name as a browser would send it, e.g. shop.example.com.' },
  )
}
