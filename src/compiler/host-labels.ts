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
    if (segment.kind !== 'static' || !/[^\x00-\x7f]/.test(segment.value)) return segment
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
