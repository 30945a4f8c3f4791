/**
 * The simple-regex compiler against the real thing: for each pattern, the character loop it
 * emits must agree with `^(?:pattern)$` on every string tried (seeded random strings over the
 * characters the pattern cares about, plus edge cases); patterns it must not take stay regexes.
 */
import { describe, expect, it } from 'vitest'
import { inlineRegex } from '../../src/compiler/emit/regex-inline.js'
import { mulberry32 } from '../support/seeded-random.js'

type Test = (path: string, i: number, e: number) => boolean

function compile(source: string): Test | null {
  const code = inlineRegex(source, 'RX')
  return code === null ? null : (new Function(`${code}\nreturn RX`)() as Test)
}

const ALPHABET = [
  'a',
  'b',
  'x',
  'z',
  'A',
  'B',
  'Z',
  '0',
  '5',
  '9',
  '_',
  '-',
  '.',
  't',
  'e',
  '%',
  '/',
  ' ',
  '\n',
  'é',
  '€',
]

function samples(seed: number, count: number): string[] {
  const next = mulberry32(seed)
  const out = ['', 'a', 'A', '0', '.txt', 'abc.txt', 'ABC', 'AB', 'ABCD', '2024', 'deadbeef']
  for (let n = 0; n < count; n++) {
    const length = Math.floor(next() * 9)
    let s = ''
    for (let k = 0; k < length; k++) s += ALPHABET[Math.floor(next() * ALPHABET.length)]
    out.push(s)
  }
  return out
}

const INLINED = [
  '[A-Z]{3}',
  '[a-z]+\\.txt',
  '\\d{4}',
  '\\d+',
  '[0-9a-f]{6,8}',
  '[a-z0-9_-]+',
  'v\\d+',
  '[a-z]*\\d',
  'x?y?z',
  '[^.]+\\.[a-z]{2,4}',
  '\\w{2,}',
  '[A-Za-z]{1,3}[0-9]{2}',
  '[\\-.]+',
  '[^/]+',
  'ab{2}c',
  '[a-]+',
  'a.c',
]

const LEFT_TO_REGEX = [
  'a|ab', // alternation
  '(ab)+', // group
  '[a-z]+[a-z]', // a repeat that must give back
  'a*a', // the same
  '\\s+', // \s is wider than ASCII
  '[a-z]+?', // lazy
  '[]a]', // empty class then literal
  '\\bfoo', // word boundary
  '\\u0041', // unicode escape
  '\\x41+', // hex escape
  '[\\d-z]', // a range from a class
  '.*x.*', // overlapping repeats
]

describe('inlineRegex', () => {
  it.each(INLINED)('compiles %s into a loop that agrees with the regex', (source) => {
    const test = compile(source)
    expect(test, `${source} should be inlined`).not.toBeNull()
    const regex = new RegExp(`^(?:${source})$`)
    for (const s of samples(source.length * 7919, 3000)) {
      // Embedded in a longer string, as a segment of a path is.
      const path = `/p/${s}/q`
      expect({ s, got: test!(path, 3, 3 + s.length) }).toEqual({ s, got: regex.test(s) })
    }
  })

  it.each(LEFT_TO_REGEX)('leaves %s to the regex engine', (source) => {
    expect(compile(source)).toBeNull()
  })
})
