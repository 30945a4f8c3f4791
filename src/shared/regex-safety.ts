/**
 * Build-time checks of custom parameter regexes: can one request make it backtrack for seconds,
 * and can it match a path segment at all. Build time only (the runtime never imports it).
 *
 * V8's regex engine backtracks: on a failing input it tries every way the regex can match each
 * prefix. A regex is read as a Glushkov automaton (regex-automaton.ts: one state per character
 * position, repeats of up to EXPAND_MAX copies unrolled) and searched for the two shapes of
 * ambiguity that make that blow up (Weber & Seidl; Weideman et al., "Analyzing matching time behavior of backtracking
 * regular expression matchers by using ambiguity of NFA", 2016):
 *
 * - exponential: a loop that can read the same text in two ways, as `(a|a)*`, `(a|aa)+` or the
 *   nested `(a+)+` (the inner and the outer loop both step from a to a: two parallel edges).
 *   Measured: `(a|a)*` took 13 s on 28 characters.
 * - polynomial: two loops in a row that can read the same text, with a way from one to the
 *   other on it, as `a*a*` or `\w+\d+`: O(n²) or worse, and a path may be ~16 KB (Node's header
 *   limit). Measured: `a*a*a*b` took 1.2 s on 2,000 characters.
 *
 * Every regex is tested anchored (`^(?:…)$`, or sticky in place), so a loop that ends the match
 * can always be made to fail by the next character: no shape is excused by what follows it.
 * Lookaround bodies are checked on their own; anchors and lookarounds are read as matching the
 * empty string, which only adds ways to match (stricter, never laxer).
 */
import { Automaton, MAX_STEPS, TooComplex, type Fragment } from './regex-automaton.js'
import { intersect, parseRegex, type CharSet, type RegexNode } from './regex-syntax.js'

export type BacktrackingRisk = 'exponential' | 'polynomial' | 'too-complex'

const SLASH = 47

/**
 * How a regex source (one that compiles) can backtrack badly, or null when it cannot.
 * @example
 * backtrackingRisk('(a|aa)+') // 'exponential'
 * backtrackingRisk('[a-z]+-[0-9]+') // null
 */
export function backtrackingRisk(source: string): BacktrackingRisk | null {
  const budget = { steps: 0 }
  const pending = [parseRegex(source)]
  const seen = new Set<RegexNode>()
  try {
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      if (seen.has(node)) continue
      seen.add(node)
      const automaton = new Automaton(budget, false)
      automaton.compile(node)
      pending.push(...automaton.lookarounds)
      const risk = ambiguity(automaton, budget)
      if (risk !== null) return risk
    }
  } catch (error) {
    if (error instanceof TooComplex) return 'too-complex'
    throw error
  }
  return null
}

/**
 * What a path segment can hold as the matcher sees it: printable ASCII but `/`. Node refuses a
 * request target holding a space, a control or a non-ASCII byte, so those arrive %-encoded.
 */
export const SEGMENT_CHARS: CharSet = [0x21, SLASH - 1, SLASH + 1, 0x7e]
/** Any character but `/`: what a segment is by its boundaries alone. */
export const NOT_SLASH: CharSet = [0, SLASH - 1, SLASH + 1, 0xffff]

/**
 * Whether the regex matches some non-empty text of `alphabet` (a path segment's characters by
 * default). With `caretFails`, `^` never matches (tested in place on the path, a segment never
 * starts it). With `normalEscapes`, the text must also be in the normal form match() tests
 * constraints on: every `%` starts an escape of two uppercase hex digits that is not an
 * unreserved character (`%c3`, `%41` and `%2D` arrive as `%C3`, `A` and `-`).
 * @example
 * canMatchSegment('a/b', false) // false
 * canMatchSegment('caf\u00e9', false) // false: é arrives as %C3%A9
 * canMatchSegment('caf%c3%a9', false, SEGMENT_CHARS, true) // false: it arrives as caf%C3%A9
 */
export function canMatchSegment(
  source: string,
  caretFails: boolean,
  alphabet: CharSet = SEGMENT_CHARS,
  normalEscapes = false,
): boolean {
  const automaton = new Automaton({ steps: 0 }, caretFails)
  let root: Fragment
  try {
    root = automaton.compile(parseRegex(source))
  } catch (error) {
    if (error instanceof TooComplex) return true
    throw error
  }
  // A search of (position, escape state) pairs; without normalEscapes the state stays TEXT.
  const steps = (p: number, state: number): number[] => {
    const set = intersect(automaton.sets[p]!, alphabet)
    if (!normalEscapes) return set.length > 0 ? [TEXT] : []
    return escapeSteps(set, state)
  }
  const reached = new Set<number>()
  const queue: [number, number][] = []
  const visit = (p: number, state: number): void => {
    for (const next of steps(p, state)) {
      const key = p * ESCAPE_STATES + next
      if (!reached.has(key)) reached.add(key) && queue.push([p, next])
    }
  }
  for (const p of root.first) visit(p, TEXT)
  for (let item = queue.pop(); item !== undefined; item = queue.pop()) {
    const [p, state] = item
    if (state === TEXT && root.last.includes(p)) return true
    for (const next of automaton.follow[p]!) visit(next, state)
  }
  return false
}

// Escape states of a normal-form segment: in text, after '%', after '%' and a first hex digit d
// (AFTER_DIGIT + d).
const TEXT = 0
const AFTER_PERCENT = 1
const AFTER_DIGIT = 2
const ESCAPE_STATES = AFTER_DIGIT + 16
const PERCENT = 0x25
const HEX_DIGITS = '0123456789ABCDEF'
const UNRESERVED_CHAR = /^[A-Za-z0-9\-._~]$/
// After '%' and the first digit d: the second digits whose escape is no unreserved character.
const SECOND_DIGITS: CharSet[] = [...HEX_DIGITS].map((first) =>
  [...HEX_DIGITS]
    .filter((second) => !UNRESERVED_CHAR.test(String.fromCharCode(parseInt(first + second, 16))))
    .flatMap((c) => [c.charCodeAt(0), c.charCodeAt(0)]),
)

/** The escape states after reading one character of `set` in escape state `state`. */
function escapeSteps(set: CharSet, state: number): number[] {
  const has = (code: number): boolean => intersect(set, [code, code]).length > 0
  if (state === TEXT) {
    const out: number[] = []
    if (intersect(set, [0, PERCENT - 1, PERCENT + 1, 0xffff]).length > 0) out.push(TEXT)
    if (has(PERCENT)) out.push(AFTER_PERCENT)
    return out
  }
  if (state === AFTER_PERCENT) {
    return [...HEX_DIGITS].flatMap((c, d) => (has(c.charCodeAt(0)) ? [AFTER_DIGIT + d] : []))
  }
  return SECOND_DIGITS[state - AFTER_DIGIT]!.some((code) => has(code)) ? [TEXT] : []
}

/**
 * Whether the regex can consume the character `code` (lookaround bodies look, they do not
 * consume; a backreference repeats what its group consumed).
 * @example
 * canConsume('(?<=/)ab', 47) // false
 */
export function canConsume(source: string, code: number): boolean {
  const consumes = (node: RegexNode): boolean => {
    switch (node.type) {
      case 'chars':
        return intersect(node.set, [code, code]).length > 0
      case 'seq':
        return node.items.some(consumes)
      case 'alt':
        return node.alts.some(consumes)
      case 'repeat':
        return node.max > 0 && consumes(node.body)
      default:
        return false
    }
  }
  return consumes(parseRegex(source))
}

function ambiguity(automaton: Automaton, budget: { steps: number }): BacktrackingRisk | null {
  const { sets, follow } = automaton
  const next = follow.map((targets) => targets.filter((t) => sets[t]!.length > 0))
  const cyclic = components(next.length, (v) => next[v]!, budget).filter(
    (c) => c.length > 1 || next[c[0]!]!.includes(c[0]!),
  )
  for (const component of cyclic) {
    if (hasExponentialLoop(component, next, sets, budget)) return 'exponential'
  }
  for (const from of cyclic) {
    const reach = reachable(from, next)
    for (const to of cyclic) {
      if (to.some((q) => reach.has(q)) && hasPolynomialPair(from, to, next, sets, budget))
        return 'polynomial'
    }
  }
  return null
}

/**
 * Two different paths around one loop reading the same text: a pair of parallel edges inside
 * the component, or, in the product of the component with itself, a pair of different states on
 * a cycle through a pair of equal ones.
 */
function hasExponentialLoop(
  component: number[],
  next: number[][],
  sets: CharSet[],
  budget: { steps: number },
): boolean {
  const local = new Map(component.map((p, i) => [p, i]))
  const inside = component.map((p) => next[p]!.filter((t) => local.has(t)))
  if (inside.some((targets) => new Set(targets).size < targets.length)) return true
  const k = component.length
  const step = (pair: number): number[] => {
    const out: number[] = []
    for (const x of inside[Math.floor(pair / k)]!) {
      for (const y of inside[pair % k]!) {
        if (intersect(sets[x]!, sets[y]!).length > 0) out.push(local.get(x)! * k + local.get(y)!)
      }
    }
    return out
  }
  return components(k * k, step, budget).some(
    (pairs) =>
      pairs.some((pair) => Math.floor(pair / k) === pair % k) &&
      pairs.some((pair) => Math.floor(pair / k) !== pair % k),
  )
}

/**
 * States p (in `from`) and q (in `to`), p ≠ q, and a text that leads p to p, p to q and q to q:
 * a breadth-first search of triples, from (p, p, q) to (p, q, q).
 */
function hasPolynomialPair(
  from: number[],
  to: number[],
  next: number[][],
  sets: CharSet[],
  budget: { steps: number },
): boolean {
  const n = next.length
  const inFrom = new Set(from)
  const inTo = new Set(to)
  for (const p of from) {
    for (const q of to) {
      if (p === q) continue
      const target = (p * n + q) * n + q
      const start = (p * n + p) * n + q
      const seen = new Set([start])
      const queue = [start]
      for (let s = queue.pop(); s !== undefined; s = queue.pop()) {
        if (s === target) return true
        const [x, y, z] = [Math.floor(s / (n * n)), Math.floor(s / n) % n, s % n]
        for (const x2 of next[x]!) {
          if (!inFrom.has(x2)) continue
          for (const y2 of next[y]!) {
            const xy = intersect(sets[x2]!, sets[y2]!)
            if (xy.length === 0) continue
            for (const z2 of next[z]!) {
              if (++budget.steps > MAX_STEPS) throw new TooComplex()
              const t = (x2 * n + y2) * n + z2
              if (inTo.has(z2) && !seen.has(t) && intersect(xy, sets[z2]!).length > 0) {
                seen.add(t)
                queue.push(t)
              }
            }
          }
        }
      }
    }
  }
  return false
}

function reachable(from: number[], next: number[][]): Set<number> {
  const seen = new Set(from)
  const queue = [...from]
  for (let v = queue.pop(); v !== undefined; v = queue.pop()) {
    for (const w of next[v]!) if (!seen.has(w)) seen.add(w) && queue.push(w)
  }
  return seen
}

/** Strongly connected components (Tarjan, iterative: product graphs can be deep). */
function components(
  count: number,
  edges: (v: number) => readonly number[],
  budget: { steps: number },
): number[][] {
  const index = new Int32Array(count).fill(-1)
  const low = new Int32Array(count)
  const onStack = new Uint8Array(count)
  const stack: number[] = []
  const out: number[][] = []
  let counter = 0
  const open = (v: number, frames: [number, readonly number[], number][]): void => {
    index[v] = low[v] = counter++
    stack.push(v)
    onStack[v] = 1
    frames.push([v, edges(v), 0])
  }
  for (let root = 0; root < count; root++) {
    if (index[root] !== -1) continue
    const frames: [number, readonly number[], number][] = []
    open(root, frames)
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      const [v, targets] = frame
      if (++budget.steps > MAX_STEPS) throw new TooComplex()
      if (frame[2] < targets.length) {
        const w = targets[frame[2]++]!
        if (index[w] === -1) open(w, frames)
        else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!)
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent) low[parent[0]] = Math.min(low[parent[0]]!, low[v]!)
      if (low[v] !== index[v]) continue
      const component: number[] = []
      let w: number
      do {
        w = stack.pop()!
        onStack[w] = 0
        component.push(w)
      } while (w !== v)
      out.push(component)
    }
  }
  return out
}
