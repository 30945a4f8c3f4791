/**
 * Scans a pattern past its `{...}` parameters, whose regexes may hold separators, braces,
 * escapes and character classes.
 */
import { patternError } from './errors.js'

/** Splits on `separator` except inside `{...}` (regexes may contain separators and braces). */
export function splitOutsideBraces(
  pattern: string,
  body: string,
  separator: string,
  domain = false,
): string[] {
  const parts: string[] = []
  let start = 0
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c === '{') {
      const end = braceEnd(body, i)
      if (end === -1) throw patternError(pattern, 'has an unclosed "{"', domain)
      i = end
    } else if (c === '}') {
      throw patternError(pattern, 'has a "}" without its "{"', domain)
    } else if (c === separator) {
      parts.push(body.slice(start, i))
      start = i + 1
    }
  }
  parts.push(body.slice(start))
  return parts
}

/** Index of the `}` closing the `{` at `open`, skipping escapes and character classes; -1 if none. */
export function braceEnd(text: string, open: number): number {
  let depth = 0
  let inClass = false
  for (let i = open; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (inClass) inClass = c !== ']'
    else if (c === '[') inClass = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i
  }
  return -1
}

export function stripParams(pattern: string): string {
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '{') {
      const end = braceEnd(pattern, i)
      if (end === -1) return out
      i = end
    } else {
      out += pattern[i]
    }
  }
  return out
}
