/**
 * A small reader of JavaScript regex sources (no flags, Annex B syntax, as `new RegExp(source)`
 * takes them) into a tree of character sets, sequences, alternations and repeats, for the build's
 * checks of custom parameter regexes (regex-safety.ts). Build time only.
 *
 * It approximates where exactness is not needed: anything it cannot decode (an octal escape, a
 * backreference) becomes "any character" or "any text", which only makes the checks stricter.
 * The source has compiled before it gets here, so syntax errors are not its concern.
 */

/** UTF-16 code units as sorted, disjoint, non-adjacent inclusive ranges: [lo, hi, lo, hi, ...]. */
export type CharSet = readonly number[]

export type RegexNode =
  | { type: 'chars'; set: CharSet }
  | { type: 'seq'; items: RegexNode[] }
  | { type: 'alt'; alts: RegexNode[] }
  | { type: 'repeat'; min: number; max: number; body: RegexNode }
  /** A lookahead or lookbehind, positive or negative: consumes nothing. */
  | { type: 'look'; body: RegexNode }
  | { type: 'assert'; kind: '^' | '$' | 'b' }
  /** A backreference: some text the checks treat as any text. */
  | { type: 'backref' }

const MAX_UNIT = 0xffff

/** A set from [lo, hi] ranges in any order. */
export function charSet(ranges: readonly (readonly [number, number])[]): CharSet {
  const out: number[] = []
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const end = out.length - 1
    if (end > 0 && lo <= out[end]! + 1) out[end] = Math.max(out[end]!, hi)
    else out.push(lo, hi)
  }
  return out
}

function rangesOf(set: CharSet): [number, number][] {
  const out: [number, number][] = []
  for (let i = 0; i < set.length; i += 2) out.push([set[i]!, set[i + 1]!])
  return out
}

function union(sets: readonly CharSet[]): CharSet {
  return charSet(sets.flatMap(rangesOf))
}

function complement(set: CharSet): CharSet {
  const out: [number, number][] = []
  let next = 0
  for (const [lo, hi] of rangesOf(set)) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= MAX_UNIT) out.push([next, MAX_UNIT])
  return charSet(out)
}

/** The characters in both sets. */
export function intersect(a: CharSet, b: CharSet): CharSet {
  const out: number[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]!, b[j]!)
    const hi = Math.min(a[i + 1]!, b[j + 1]!)
    if (lo <= hi) out.push(lo, hi)
    if (a[i + 1]! < b[j + 1]!) i += 2
    else j += 2
  }
  return out
}

const single = (code: number): CharSet => [code, code]
export const ANY: CharSet = [0, MAX_UNIT]
const DIGIT = charSet([[48, 57]])
const WORD = charSet([
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
])
const SPACE = charSet([
  [9, 13],
  [32, 32],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
])
const DOT = complement(
  charSet([
    [10, 10],
    [13, 13],
    [0x2028, 0x2029],
  ]),
)
const CLASS_ESCAPES: Readonly<Record<string, CharSet>> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
}
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { f: 12, n: 10, r: 13, t: 9, v: 11 }

/**
 * Reads a regex source that compiles into its tree.
 * @example
 * parseRegex('a+') // { type: 'seq', items: [{ type: 'repeat', min: 1, max: Infinity, ... }] }
 */
export function parseRegex(source: string): RegexNode {
  return new RegexReader(source).read()
}

/**
 * The first escape of `source` that only the `u` flag gives a meaning, as written (`\p{L}`), or
 * null. Constraints are compiled without that flag, where `\p{L}` is the text "p{L}", `\u{1F600}`
 * the text "u{1F600}" and `\u{2}` is "uu". Inside a character class too; an escaped backslash
 * (`\\p{L}`: a backslash, then "p{L}") is not one.
 * @example
 * unicodeModeEscape('[\\p{L}-]+') // '\\p{L}'
 * unicodeModeEscape('\\\\p{L}') // null
 */
export function unicodeModeEscape(source: string): string | null {
  const reader = new RegexReader(source)
  reader.read()
  return reader.unicodeModeEscape
}

/** The source's top-level alternatives (`a|b(c|d)` gives `a` and `b(c|d)`). */
export function topLevelAlternatives(source: string): string[] {
  const parts: string[] = []
  let depth = 0
  let inClass = false
  let start = 0
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (c === '\\') i++
    else if (inClass) inClass = c !== ']'
    else if (c === '[') inClass = true
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === '|' && depth === 0) {
      parts.push(source.slice(start, i))
      start = i + 1
    }
  }
  parts.push(source.slice(start))
  return parts
}

class RegexReader {
  readonly #s: string
  #i = 0
  readonly #groups: number
  readonly #named: boolean
  /** The first `\p{`, `\P{` or `\u{` escape read, up to its `}` (see unicodeModeEscape). */
  unicodeModeEscape: string | null = null

  constructor(source: string) {
    this.#s = source
    const bare = source.replace(/\\./g, '').replace(/\[[^\]]*\]/g, '')
    this.#groups = [...bare.matchAll(/\((?!\?)|\(\?<(?![=!])/g)].length
    this.#named = /\(\?<[^=!]/.test(source)
  }

  read(): RegexNode {
    return this.#alternation()
  }

  #alternation(): RegexNode {
    const alts = [this.#sequence()]
    while (this.#s[this.#i] === '|') {
      this.#i++
      alts.push(this.#sequence())
    }
    return alts.length === 1 ? alts[0]! : { type: 'alt', alts }
  }

  #sequence(): RegexNode {
    const items: RegexNode[] = []
    while (this.#i < this.#s.length && this.#s[this.#i] !== '|' && this.#s[this.#i] !== ')') {
      let atom = this.#atom()
      for (let q = this.#quantifier(); q !== null; q = this.#quantifier()) {
        if (this.#s[this.#i] === '?') this.#i++ // lazy: the same backtracking, in another order
        atom = { type: 'repeat', min: q[0], max: q[1], body: atom }
      }
      items.push(atom)
    }
    return { type: 'seq', items }
  }

  #quantifier(): [number, number] | null {
    const c = this.#s[this.#i]
    if (c === '*' || c === '+' || c === '?') {
      this.#i++
      return c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1]
    }
    const braces = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(this.#s.slice(this.#i)) : null
    if (braces === null) return null
    this.#i += braces[0].length
    const min = Number(braces[1])
    if (braces[2] === undefined) return [min, min]
    return [min, braces[3] === '' ? Infinity : Number(braces[3])]
  }

  #atom(): RegexNode {
    const c = this.#s[this.#i++]!
    if (c === '(') return this.#group()
    if (c === '[') return { type: 'chars', set: this.#class() }
    if (c === '.') return { type: 'chars', set: DOT }
    if (c === '^' || c === '$') return { type: 'assert', kind: c }
    if (c === '\\') return this.#escape()
    return { type: 'chars', set: single(c.charCodeAt(0)) }
  }

  #group(): RegexNode {
    const look = /^\?<?[=!]/.exec(this.#s.slice(this.#i))
    if (look) this.#i += look[0].length
    else if (this.#s.startsWith('?:', this.#i)) this.#i += 2
    else if (this.#s.startsWith('?<', this.#i)) this.#i = this.#s.indexOf('>', this.#i) + 1
    const body = this.#alternation()
    this.#i++ // ')'
    return look ? { type: 'look', body } : body
  }

  #escape(): RegexNode {
    const e = this.#s[this.#i++]!
    if (e === 'b' || e === 'B') return { type: 'assert', kind: 'b' }
    if (/[1-9]/.test(e)) {
      const digits = /^\d*/.exec(this.#s.slice(this.#i))![0]
      this.#i += digits.length
      // A group number is a backreference; a larger one an octal escape (Annex B): some char.
      if (Number(e + digits) <= this.#groups) return { type: 'backref' }
      return { type: 'chars', set: ANY }
    }
    if (e === 'k' && this.#named) {
      this.#i = this.#s.indexOf('>', this.#i) + 1
      return { type: 'backref' }
    }
    return { type: 'chars', set: this.#escapedChars(e, false) }
  }

  /** The characters of `\<e>` (`e` read), inside a class or not. */
  #escapedChars(e: string, inClass: boolean): CharSet {
    if ((e === 'p' || e === 'P' || e === 'u') && this.#s[this.#i] === '{') {
      const close = this.#s.indexOf('}', this.#i)
      this.unicodeModeEscape ??= this.#s.slice(this.#i - 2, close === -1 ? this.#i + 1 : close + 1)
    }
    if (e in CLASS_ESCAPES) return CLASS_ESCAPES[e]!
    if (e in CONTROL_ESCAPES) return single(CONTROL_ESCAPES[e]!)
    if (inClass && e === 'b') return single(8)
    if (/\d/.test(e)) {
      if (e === '0' && !/\d/.test(this.#s[this.#i] ?? '')) return single(0)
      return ANY // an octal escape
    }
    const hex = e === 'x' ? 2 : e === 'u' ? 4 : 0
    const digits = hex > 0 ? this.#s.slice(this.#i, this.#i + hex) : ''
    if (hex > 0 && new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
      this.#i += hex
      return single(parseInt(digits, 16))
    }
    if (e === 'c') {
      const letter = this.#s[this.#i] ?? ''
      if (/[A-Za-z]/.test(letter) || (inClass && /[\d_]/.test(letter))) {
        this.#i++
        return single(letter.charCodeAt(0) % 32)
      }
      this.#i-- // `\c` not followed by a letter is a backslash, then `c`
      return single(92)
    }
    return single(e.charCodeAt(0))
  }

  #class(): CharSet {
    const negated = this.#s[this.#i] === '^'
    if (negated) this.#i++
    const parts: CharSet[] = []
    while (this.#i < this.#s.length && this.#s[this.#i] !== ']') {
      const from = this.#classAtom()
      const dash = this.#s[this.#i] === '-' && this.#s[this.#i + 1] !== ']'
      if (!dash || this.#i + 1 >= this.#s.length) {
        parts.push(from)
        continue
      }
      this.#i++
      const to = this.#classAtom()
      const isChar = (set: CharSet): boolean => set.length === 2 && set[0] === set[1]
      if (isChar(from) && isChar(to)) parts.push(charSet([[from[0]!, to[0]!]]))
      else parts.push(from, single(45), to) // `[\d-z]`: the "-" is literal (Annex B)
    }
    this.#i++ // ']'
    const set = union(parts)
    return negated ? complement(set) : set
  }

  #classAtom(): CharSet {
    const c = this.#s[this.#i++]!
    if (c !== '\\') return single(c.charCodeAt(0))
    return this.#escapedChars(this.#s[this.#i++]!, true)
  }
}
