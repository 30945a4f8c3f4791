/**
 * Compiles the simple parameter regexes users write most (`[A-Z]{3}`, `[a-z]+\.txt`, `\d{4}`,
 * `[0-9a-f]{6,8}`) into character loops, so matching them runs no regex engine: a sequence of
 * single characters or classes, each with an optional quantifier. Anything else (groups,
 * alternation, anchors, lookaround, lazy quantifiers, \s, \b, flags' worth of subtlety) gets
 * null and stays a RegExp.
 *
 * The loops are greedy without backtracking, which equals the regex only when no repeated atom
 * could give characters back to what follows it; such patterns are left to the regex too.
 */
import { safeComment } from './code.js'

/** Sorted, disjoint, inclusive ranges of UTF-16 code units. */
type CharSet = [number, number][]

interface Atom {
  set: CharSet
  min: number
  max: number // Infinity: unbounded
}

const MAX_UNIT = 0xffff
const DIGITS: CharSet = [[48, 57]]
const WORD: CharSet = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
]
// `.` matches anything but line terminators.
const DOT: CharSet = complement([
  [10, 10],
  [13, 13],
  [0x2028, 0x2029],
])
// A lone character after `\` that stands for itself (syntax characters and `/`, `-`).
const ESCAPABLE = '^$\\.*+?()[]{}|/-'

/**
 * A function `name(path, i, e)` testing whether `source` matches all of path[i, e), or null
 * when the pattern is not one this compiler takes.
 * @example
 * inlineRegex('[A-Z]{3}', 'RX0') // 'function RX0(path, i, e) { ... }'
 */
export function inlineRegex(source: string, name: string): string | null {
  const atoms = parse(source)
  if (atoms === null || atoms.length === 0 || !greedyIsExact(atoms)) return null
  const lines = [`function ${name}(path, i, e) { // ${safeComment(source)}`]
  // A fixed-length pattern turns away a segment of any other length at once.
  if (atoms.every((a) => a.min === a.max))
    lines.push(`  if (e - i !== ${atoms.reduce((n, a) => n + a.min, 0)}) return false`)
  lines.push('  let c = 0')
  atoms.forEach((atom, k) => lines.push(...emitAtom(atom, k)))
  lines.push('  return i === e')
  lines.push('}')
  return lines.join('\n')
}

function emitAtom(atom: Atom, k: number): string[] {
  const test = setTest(atom.set, 'c')
  if (atom.min === 1 && atom.max === 1) {
    return [`  if (i === e || (c = path.charCodeAt(i), !(${test}))) return false`, '  i++']
  }
  const n = `n${k}`
  const bound = atom.max === Infinity ? '' : ` && ${n} < ${atom.max}`
  const lines = [
    `  let ${n} = 0`,
    `  while (i < e${bound} && (c = path.charCodeAt(i), ${test})) { i++; ${n}++ }`,
  ]
  if (atom.min > 0) lines.push(`  if (${n} < ${atom.min}) return false`)
  return lines
}

/** A boolean expression: whether the code unit in `v` is in `set`. */
function setTest(set: CharSet, v: string): string {
  const tests = set.map(([lo, hi]) => {
    if (lo === hi) return `${v} === ${lo}`
    if (lo === 0) return `${v} <= ${hi}`
    if (hi === MAX_UNIT) return `${v} >= ${lo}`
    return `(${v} >= ${lo} && ${v} <= ${hi})`
  })
  return tests.length === 0 ? 'false' : tests.join(' || ')
}

/**
 * Greedy equals the regex when each repeated atom's characters cannot start what follows it: no
 * overlap with the next atoms up to and including the first that must match at least once.
 */
function greedyIsExact(atoms: Atom[]): boolean {
  for (let k = 0; k < atoms.length; k++) {
    if (atoms[k]!.min === atoms[k]!.max) continue
    for (let j = k + 1; j < atoms.length; j++) {
      if (overlaps(atoms[k]!.set, atoms[j]!.set)) return false
      if (atoms[j]!.min > 0) break
    }
  }
  return true
}

function parse(source: string): Atom[] | null {
  const atoms: Atom[] = []
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    let read: { set: CharSet; next: number } | null
    if (c === '[') {
      const end = classEnd(source, i)
      const set = end === -1 ? null : parseClass(source.slice(i + 1, end))
      read = set && { set, next: end + 1 }
    } else if (c === '.') {
      read = { set: DOT, next: i + 1 }
    } else {
      read = '^$|()*+?{}]'.includes(c) ? null : readChar(source, i)
    }
    if (read === null) return null
    const quantifier = parseQuantifier(source, read.next)
    if (quantifier === null) return null
    atoms.push({ set: read.set, min: quantifier.min, max: quantifier.max })
    i = quantifier.next
  }
  return atoms
}

/** One character at `i`, inside or outside a class: an escape (`\d`, `\.`) or a literal. */
function readChar(text: string, i: number): { set: CharSet; next: number } | null {
  if (text[i] !== '\\') return { set: single(text.charCodeAt(i)), next: i + 1 }
  const set = escapeSet(text[i + 1] ?? '')
  return set && { set, next: i + 2 }
}

function parseQuantifier(
  source: string,
  i: number,
): { min: number; max: number; next: number } | null {
  const c = source[i]
  let result: { min: number; max: number; next: number }
  if (c === '?') result = { min: 0, max: 1, next: i + 1 }
  else if (c === '*') result = { min: 0, max: Infinity, next: i + 1 }
  else if (c === '+') result = { min: 1, max: Infinity, next: i + 1 }
  else if (c === '{') {
    const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(source.slice(i))
    if (!m) return null
    const min = Number(m[1])
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
    if (max < min) return null
    result = { min, max, next: i + m[0].length }
  } else return { min: 1, max: 1, next: i }
  // A lazy quantifier (`+?`) or another quantifier after this one: leave it to the regex.
  const after = source[result.next]
  return after !== undefined && '?+*{'.includes(after) ? null : result
}

/** The index of the `]` closing the class opened at `open`, or -1 (also for `[]` and `[^]`). */
function classEnd(source: string, open: number): number {
  const first = source[open + 1] === '^' ? open + 2 : open + 1
  if (source[first] === ']') return -1
  for (let i = first; i < source.length; i++) {
    if (source[i] === '\\') i++
    else if (source[i] === ']') return i
    else if (source[i] === '[') return -1
  }
  return -1
}

function parseClass(body: string): CharSet | null {
  const negated = body.startsWith('^')
  let set: CharSet = []
  let i = negated ? 1 : 0
  while (i < body.length) {
    const from = readChar(body, i)
    if (from === null) return null
    i = from.next
    if (body[i] !== '-' || i + 1 === body.length) {
      set = union(set, from.set)
      continue
    }
    // A range: both ends single characters (a range from `\d` is left to the regex).
    const to = readChar(body, i + 1)
    const lo = onlyCode(from.set)
    const hi = to && onlyCode(to.set)
    if (to === null || lo === null || hi === null || hi < lo) return null
    set = union(set, [[lo, hi]])
    i = to.next
  }
  return negated ? complement(set) : set
}

/** The code unit of a one-character set, else null. */
function onlyCode(set: CharSet): number | null {
  return set.length === 1 && set[0]![0] === set[0]![1] ? set[0]![0] : null
}

/** The set of `\<c>`, or null for escapes left to the regex (\s, \b, \u..., \x..., ...). */
function escapeSet(c: string): CharSet | null {
  if (c === 'd') return DIGITS
  if (c === 'w') return WORD
  if (c !== '' && ESCAPABLE.includes(c)) return single(c.charCodeAt(0))
  return null
}

function single(code: number): CharSet {
  return [[code, code]]
}

function union(a: CharSet, b: CharSet): CharSet {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0])
  const out: CharSet = []
  for (const [lo, hi] of all) {
    const last = out[out.length - 1]
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else out.push([lo, hi])
  }
  return out
}

function complement(set: CharSet): CharSet {
  const out: CharSet = []
  let next = 0
  for (const [lo, hi] of union(set, [])) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= MAX_UNIT) out.push([next, MAX_UNIT])
  return out
}

function overlaps(a: CharSet, b: CharSet): boolean {
  return a.some(([lo, hi]) => b.some(([lo2, hi2]) => lo <= hi2 && lo2 <= hi))
}
