/**
 * The automaton the regex checks (regex-safety.ts) search: a regex read as a Glushkov automaton,
 * one state per character position, with repeats of up to EXPAND_MAX copies unrolled. Build time
 * only (the runtime never imports it).
 */
import { ANY, type CharSet, type RegexNode } from './regex-syntax.js'

// {n,m} up to this count is unrolled exactly; a larger one is read as n copies then a loop (more
// ways to match, so stricter). Built-in types and README examples stay well under it.
const EXPAND_MAX = 10
// States and search steps before a regex is declared too complex to check (milliseconds of work);
// route constraints are a few dozen characters.
const MAX_POSITIONS = 400
export const MAX_STEPS = 3_000_000

/** Thrown when a regex takes more positions or search steps than the budget allows. */
export class TooComplex extends Error {}

/** What a compiled piece of a regex can start and end with, and whether it can match nothing. */
export interface Fragment {
  nullable: boolean
  first: number[]
  last: number[]
}

const EMPTY: Fragment = { nullable: true, first: [], last: [] }
const FAIL: Fragment = { nullable: false, first: [], last: [] }

/**
 * A Glushkov automaton: `follow[p]` lists, with repeats, the positions that may come after p.
 * @example
 * const automaton = new Automaton({ steps: 0 }, false)
 * const root = automaton.compile(parseRegex('a+b')) // root.first, root.last: positions
 */
export class Automaton {
  readonly sets: CharSet[] = []
  readonly follow: number[][] = []
  readonly lookarounds: RegexNode[] = []

  constructor(
    readonly budget: { steps: number },
    readonly caretFails: boolean,
  ) {}

  compile(node: RegexNode): Fragment {
    switch (node.type) {
      case 'chars':
        return this.#position(node.set)
      case 'seq':
        return node.items.reduce<Fragment>(
          (acc, item) => this.#concat(acc, this.compile(item)),
          EMPTY,
        )
      case 'alt':
        return node.alts.map((alt) => this.compile(alt)).reduce((a, b) => this.#union(a, b))
      case 'repeat':
        return this.#repeat(node.body, node.min, node.max)
      case 'look':
        this.lookarounds.push(node.body)
        return EMPTY
      case 'assert':
        return node.kind === '^' && this.caretFails ? FAIL : EMPTY
      case 'backref':
        return this.#loop({ ...this.#position(ANY), nullable: true })
    }
  }

  #position(set: CharSet): Fragment {
    if (this.sets.length >= MAX_POSITIONS) throw new TooComplex()
    const p = this.sets.push(set) - 1
    this.follow.push([])
    return { nullable: false, first: [p], last: [p] }
  }

  #link(from: readonly number[], to: readonly number[]): void {
    this.budget.steps += from.length * to.length
    if (this.budget.steps > MAX_STEPS) throw new TooComplex()
    for (const f of from) this.follow[f]!.push(...to)
  }

  #concat(a: Fragment, b: Fragment): Fragment {
    this.#link(a.last, b.first)
    return {
      nullable: a.nullable && b.nullable,
      first: a.nullable ? [...a.first, ...b.first] : a.first,
      last: b.nullable ? [...a.last, ...b.last] : b.last,
    }
  }

  #union(a: Fragment, b: Fragment): Fragment {
    return {
      nullable: a.nullable || b.nullable,
      first: [...a.first, ...b.first],
      last: [...a.last, ...b.last],
    }
  }

  /** The body's last positions step back to its first ones (one more edge each time it nests). */
  #loop(body: Fragment): Fragment {
    this.#link(body.last, body.first)
    return body
  }

  #repeat(body: RegexNode, min: number, max: number): Fragment {
    let acc = EMPTY
    if (max <= EXPAND_MAX) {
      for (let k = 0; k < min; k++) acc = this.#concat(acc, this.compile(body))
      return this.#concat(acc, this.#optionalChain(body, max - min))
    }
    const copies = Math.min(min, EXPAND_MAX)
    for (let k = 1; k < copies; k++) acc = this.#concat(acc, this.compile(body))
    const loop = this.#loop(this.compile(body))
    return this.#concat(acc, copies === 0 ? { ...loop, nullable: true } : loop)
  }

  /** Up to `count` more copies as `(x(x(x)?)?)?`, the way a counted loop reads them: no choice. */
  #optionalChain(body: RegexNode, count: number): Fragment {
    if (count === 0) return EMPTY
    const chain = this.#concat(this.compile(body), this.#optionalChain(body, count - 1))
    return { ...chain, nullable: true }
  }
}
