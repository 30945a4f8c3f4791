/**
 * Emits the unrolled walk of a trie: nested blocks that test each child in precedence order and
 * fall through to the next candidate when a deeper segment fails (backtracking). Parameters are
 * kept as index pairs and sliced only in the returned result.
 *
 * Variables at depth d: `jd` where the segment starts, `ed` where it ends (`len` or a '/').
 */
import { canMatchSlash, type ParamSegment } from '../../shared/pattern.js'
import type { Variant } from '../analyze.js'
import { staticValue, type TrieNode } from '../trie.js'
import { CodeWriter, hasLiteral, lit, propKey, safeComment } from './code.js'
import { inlineRegex } from './regex-inline.js'

/**
 * How a constraint that looks around its segment (`^`, `$`, `\b`, lookbehind) is tested in place,
 * so that it sees the path around it as in a whole-path pattern: a sticky regex from the segment's
 * start that must end at the segment's end (null: one that sees only its segment). One that can
 * match a '/' would run past its segment (and, greedy, miss the match that ends at the segment's
 * end), so unless its segment ends the path, it is tested on the path up to and including the
 * '/' after the segment, before which it must end (`beforeSlash`): a lookbehind still sees what
 * comes before (`{x:(?<=/)[^x]+}` matched nothing on its slice), and `$` still only the path's
 * end. urlFor tests them alike.
 */
export function inPlaceTest(source: string): { whole: string; beforeSlash: string | null } | null {
  if (!/[$^]|\\[bB]|\(\?<[=!]/.test(source)) return null
  if (!canMatchSlash(source)) return { whole: `(?:${source})(?=/|$)`, beforeSlash: null }
  return { whole: `(?:${source})$`, beforeSlash: `(?:${source})(?=/)` }
}

/** Regexes a module needs, declared once at its top. */
export class RegexPool {
  readonly #sources = new Map<string, string>()
  /** Character-loop functions for the simple regexes (see regex-inline.ts) by source; null: not one. */
  readonly #loops = new Map<string, { name: string; code: string } | null>()

  /**
   * The test of a segment's regex on path[j, e), declared on first use. A simple regex (a
   * sequence of characters and classes with quantifiers, as `[A-Z]{3}`) becomes a character
   * loop on the path itself: no slice, no regex engine. Otherwise usually the anchored regex on
   * the sliced segment: a short slice is a fresh flat copy, which V8's regex engine runs ~40%
   * faster than a sticky regex on a request path that is itself a slice. A regex that looks at
   * its surroundings (`^`, `$`, `\b`, lookbehind; never a simple one) is tested in place with a
   * sticky regex instead, so it sees the path around it as it would in a whole-path pattern.
   */
  test(segment: ParamSegment, j: string, e: string): string {
    const source = segment.regex!
    const loop = this.#loop(source)
    if (loop !== null) return `${loop.name}(path, ${j}, ${e})`
    const inPlace = inPlaceTest(source)
    if (inPlace === null) {
      return `${this.#declare(`s:^(?:${source})$`)}.test(path.slice(${j}, ${e}))`
    }
    const whole = `sticky(${this.#declare(`y:${inPlace.whole}`)}, path, ${j}, ${e})`
    if (inPlace.beforeSlash === null) return whole
    const beforeSlash = this.#declare(`y:${inPlace.beforeSlash}`)
    return `(${e} === path.length ? ${whole} : sticky(${beforeSlash}, path.slice(0, ${e} + 1), ${j}, ${e}))`
  }

  /** The name of the regex `id` (flags char, ':', source), declared on first use. */
  #declare(id: string): string {
    let name = this.#sources.get(id)
    if (!name) {
      name = `RE${this.#sources.size}`
      this.#sources.set(id, name)
    }
    return name
  }

  /** The declarations, line by line: the regexes, then the loop functions. */
  declarations(): string[] {
    const regexes = [...this.#sources].map(([id, name]) => {
      const flags = id.startsWith('y:') ? 'y' : ''
      return `const ${name} = new RegExp(${lit(id.slice(2))}, ${lit(flags)})`
    })
    const loops = [...this.#loops.values()].flatMap((loop) => (loop ? loop.code.split('\n') : []))
    return [...regexes, ...loops]
  }

  #loop(source: string): { name: string; code: string } | null {
    if (!this.#loops.has(source)) {
      const name = `RX${this.#loops.size}`
      const code = inlineRegex(source, name)
      this.#loops.set(source, code === null ? null : { name, code })
    }
    return this.#loops.get(source)!
  }
}

interface Binding {
  segment: ParamSegment
  start: string
  end: string
  int: string | null
}

export interface WalkContext {
  out: CodeWriter
  regexes: RegexPool
  /** The expression of a hit for a variant, given its params' fields (`"id": v3`). */
  result: (variant: Variant, fields: string[]) => string
  /** Walk functions split off the shard's method functions (see emitChildren), in order. */
  functions: string[]
  /** Names taken by split-off functions (W0, W1, ...), shared by a shard's contexts. */
  named: { count: number }
  /** The emitted children of large nodes, so that sizing a subtree does not emit it again. */
  emitted: Map<TrieNode, Attempt>
  /** Whether large nodes' children go to functions of their own (see OUTLINE_MAX). */
  outline: boolean
}

// V8 never optimises a function of more than ~60 KB of bytecode (this code makes ~0.6-0.9 bytes
// of bytecode per character), so one walk of megabytes (a shard of thousands of routes under one
// first segment: `/api/...`) ran in the interpreter, ~20x slower, whatever the shard layout. A
// method function whose static paths and walk would pass FUNCTION_MAX characters is written with
// `outline` on: the tests of a node's children that pass OUTLINE_MAX characters go to functions
// of their own, each testing a run of them. Smaller ones (the GitHub API's 160 `/repos` routes:
// 48 K characters, 30 KB of bytecode) stay one function: a call per run would cost them time.
export const FUNCTION_MAX = 56_000
const OUTLINE_MAX = 24_000
// Up to this many nodes, a subtree is always small enough: written at once, without sizing.
const SMALL_SUBTREE = 16

/**
 * Emits the tests of `node`'s children, the next segment starting at variable `j`; in place, or
 * as calls of functions that each test a run of them (see OUTLINE_MAX). The children are tried
 * in order and each returns a hit or falls through, so consecutive runs keep the precedence.
 */
export function emitChildren(
  ctx: WalkContext,
  node: TrieNode,
  j: string,
  depth: number,
  bindings: Binding[],
): void {
  if (!ctx.outline || nodeCount(node) <= SMALL_SUBTREE) {
    emitChildrenInPlace(ctx, node.children, j, depth, bindings)
    return
  }
  let attempt = ctx.emitted.get(node)
  if (!attempt) {
    attempt = tryEmit(ctx, (c) => emitChildList(c, node.children, j, depth, bindings))
    ctx.emitted.set(node, attempt)
  }
  commit(ctx, attempt)
}

function emitChildList(
  ctx: WalkContext,
  children: TrieNode[],
  j: string,
  depth: number,
  bindings: Binding[],
): void {
  const sizes = children.map(
    (child) => tryEmit(ctx, (c) => emitChildrenInPlace(c, [child], j, depth, bindings)).text.length,
  )
  if (sizes.reduce((a, b) => a + b, 0) <= OUTLINE_MAX || children.length === 1) {
    emitChildrenInPlace(ctx, children, j, depth, bindings)
    return
  }
  // Many static children are one switch whose large cases are functions (see emitCases): in
  // runs, each run's switch was tried in turn, ~130 calls for `/{tenant}/res{i}`.
  const statics = children.filter((c) => staticValue(c) !== null)
  if (statics.length > 4) {
    emitStaticChildren(ctx, statics, j, depth, bindings)
    const rest = children.filter((c) => staticValue(c) === null)
    if (rest.length > 0) emitChildList(ctx, rest, j, depth, bindings)
    return
  }
  // Consecutive runs of children, each as large as fits.
  const runs: TrieNode[][] = [[]]
  let size = 0
  children.forEach((child, i) => {
    if (runs.at(-1)!.length > 0 && size + sizes[i]! > OUTLINE_MAX) {
      runs.push([])
      size = 0
    }
    runs.at(-1)!.push(child)
    size += sizes[i]!
  })
  for (const run of runs) {
    const part = tryEmit(ctx, (c) => emitChildrenInPlace(c, run, j, depth, bindings))
    ctx.out.line(`{ const r = ${outline(ctx, part, j, bindings)}; if (r !== null) return r }`)
  }
}

/** Makes `part` a function of its own (W0, W1, ...); returns the call. */
function outline(ctx: WalkContext, part: Attempt, j: string, bindings: Binding[]): string {
  const vars = [
    ...new Set(
      [j, ...bindings.flatMap((b) => [b.start, b.end, b.int ?? ''])].filter((v) =>
        /^[a-z]\d+$/.test(v),
      ),
    ),
  ]
  const args = ['path', 'len', 'hp', ...vars].join(', ')
  const name = `W${ctx.named.count++}`
  const percent = part.text.includes('(P = ') ? ['  let P = -1'] : []
  const lines = part.text
    .trimEnd()
    .split('\n')
    .map((l) => (l === '' ? l : `  ${l}`))
  ctx.functions.push(...part.functions)
  ctx.functions.push(
    [`function ${name}(${args}) {`, ...percent, ...lines, '  return null', '}', ''].join('\n'),
  )
  return `${name}(${args})`
}

/**
 * A switch on `on` with `cases` (each ends with a break). With `outline` on, its largest cases go
 * to functions of their own until the rest fit in OUTLINE_MAX: a lookup calls at most one per
 * switch, where runs of children would all be called in turn.
 */
function emitCases(
  ctx: WalkContext,
  on: string,
  cases: { open: string; write: (c: WalkContext) => void }[],
  j: string,
  bindings: Binding[],
): void {
  ctx.out.block(`switch (${on}) {`, () => {
    if (!ctx.outline) {
      for (const { open, write } of cases)
        ctx.out.block(open, () => {
          write(ctx)
          ctx.out.line('break')
        })
      return
    }
    const parts = cases.map(({ write }) => tryEmit(ctx, write))
    const outlined = largestOver(parts)
    cases.forEach(({ open }, i) => {
      ctx.out.block(open, () => {
        commitOrCall(ctx, parts[i]!, outlined, j, bindings)
        ctx.out.line('break')
      })
    })
  })
}

/** Static children tested in turn; with `outline` on, the largest as functions, as in emitCases. */
function emitStaticList(
  ctx: WalkContext,
  nodes: TrieNode[],
  j: string,
  depth: number,
  bindings: Binding[],
  checked: number,
): void {
  if (!ctx.outline) {
    for (const node of nodes) emitStaticChild(ctx, node, j, depth, bindings, checked)
    return
  }
  const parts = nodes.map((node) =>
    tryEmit(ctx, (c) => emitStaticChild(c, node, j, depth, bindings, checked)),
  )
  const outlined = largestOver(parts)
  for (const part of parts) commitOrCall(ctx, part, outlined, j, bindings)
}

/** The largest of `parts`, that must be functions of their own for the rest to fit OUTLINE_MAX. */
function largestOver(parts: Attempt[]): Set<Attempt> {
  let total = parts.reduce((n, part) => n + part.text.length, 0)
  const outlined = new Set<Attempt>()
  for (const part of [...parts].sort((a, b) => b.text.length - a.text.length)) {
    if (total <= OUTLINE_MAX) break
    outlined.add(part)
    total -= part.text.length
  }
  return outlined
}

function commitOrCall(
  ctx: WalkContext,
  part: Attempt,
  outlined: Set<Attempt>,
  j: string,
  bindings: Binding[],
): void {
  if (!outlined.has(part)) commit(ctx, part)
  else ctx.out.line(`{ const r = ${outline(ctx, part, j, bindings)}; if (r !== null) return r }`)
}

const nodeCounts = new WeakMap<TrieNode, number>()

/** The number of nodes of the subtree under (and including) `node`. */
function nodeCount(node: TrieNode): number {
  let count = nodeCounts.get(node)
  if (count === undefined) {
    count = node.children.reduce((n, c) => n + nodeCount(c), 1)
    nodeCounts.set(node, count)
  }
  return count
}

interface Attempt {
  text: string
  functions: string[]
}

/** What `write` emits, and the functions it split off, without adding them to `ctx` yet. */
function tryEmit(ctx: WalkContext, write: (c: WalkContext) => void): Attempt {
  const c: WalkContext = { ...ctx, out: new CodeWriter(), functions: [] }
  write(c)
  return { text: c.out.toString(), functions: c.functions }
}

function commit(ctx: WalkContext, attempt: Attempt): void {
  for (const line of attempt.text.trimEnd().split('\n')) ctx.out.line(line)
  ctx.functions.push(...attempt.functions)
}

function emitChildrenInPlace(
  ctx: WalkContext,
  children: TrieNode[],
  j: string,
  depth: number,
  bindings: Binding[],
): void {
  const statics = children.filter((c) => staticValue(c) !== null)
  const params = children.filter(
    (c) => c.segment?.kind === 'param' && c.segment.type !== 'catchall',
  )
  const catchAlls = children.filter(
    (c) => c.segment?.kind === 'param' && c.segment.type === 'catchall',
  )
  emitStaticChildren(ctx, statics, j, depth, bindings)
  if (params.length === 1 && (params[0]!.segment as ParamSegment).type === 'int') {
    emitIntChild(ctx, params[0]!, j, depth, bindings)
  } else if (params.length > 0) {
    const e = `e${depth}`
    ctx.out.block('{', () => {
      ctx.out.line(`let ${e} = path.indexOf('/', ${j})`)
      ctx.out.line(`if (${e} === -1) ${e} = len`)
      ctx.out.block(`if (${e} !== ${j}) {`, () => {
        for (const child of params) emitParamChild(ctx, child, j, e, depth, bindings)
      })
    })
  }
  for (const child of catchAlls) {
    const segment = child.segment as ParamSegment
    const binding = { segment, start: j, end: 'len', int: null }
    const test = segment.allowEmpty ? '' : `if (${j} !== len) `
    ctx.out.line(`${test}return ${terminalResult(ctx, child.terminal!, [...bindings, binding])}`)
  }
}

function emitStaticChildren(
  ctx: WalkContext,
  nodes: TrieNode[],
  j: string,
  depth: number,
  bindings: Binding[],
): void {
  // Few children: test each literal. Many: switch on the first character to skip most of them.
  if (nodes.length <= 4) {
    emitStaticList(ctx, nodes, j, depth, bindings, 0)
    return
  }
  const byFirst = new Map<number, TrieNode[]>()
  for (const node of nodes) {
    const code = staticValue(node)!.charCodeAt(0)
    // push, not a spread: a copy per node was quadratic in thousands of siblings.
    const group = byFirst.get(code)
    if (group) group.push(node)
    else byFirst.set(code, [node])
  }
  const cases = [...byFirst].map(([code, group]) => ({
    open: `case ${code}: {`,
    write: (c: WalkContext): void => {
      if (group.length <= STATIC_GROUP_MAX) {
        emitStaticList(c, group, j, depth, bindings, 1)
      } else {
        emitStaticTree(c, group, j, 1, depth, bindings)
      }
    },
  }))
  emitCases(ctx, `path.charCodeAt(${j})`, cases, j, bindings)
}

// Up to this many literals of one first character are tested one after the other. More go on
// switching on the characters that follow: 10,000 routes `/{tenant}/res{i}` made ~2,800 literals
// of an 'r', all tried in turn by every lookup that reached them (~160 µs for `/acme/res5000`).
const STATIC_GROUP_MAX = 8

/**
 * The static children `nodes`, whose literals share their first `at` characters (tested): a
 * character trie, as emitBucketTree's. A literal that ends here is tested first, then a prefix
 * all the others share is one test, a few are tested in turn, more are split by a switch on the
 * next character. At most one literal is a whole segment of the path, so the order of the tests
 * does not matter, and a failed one falls through (every case ends with a break) to the next.
 */
function emitStaticTree(
  ctx: WalkContext,
  nodes: TrieNode[],
  j: string,
  at: number,
  depth: number,
  bindings: Binding[],
): void {
  const done = nodes.find((node) => chainOf(node).literal.length === at)
  if (done !== undefined) emitStaticChild(ctx, done, j, depth, bindings, at)
  const rest = nodes.filter((node) => node !== done)
  if (rest.length <= STATIC_GROUP_MAX) {
    emitStaticList(ctx, rest, j, depth, bindings, at)
    return
  }
  const literals = rest.map((node) => chainOf(node).literal)
  const first = literals[0]!
  let shared = 0
  while (literals.every((l) => l.length > at + shared && l[at + shared] === first[at + shared]))
    shared++
  if (shared > 0) {
    ctx.out.block(`if (${hasLiteral(first.slice(0, at + shared), j, at)}) {`, () =>
      emitStaticTree(ctx, rest, j, at + shared, depth, bindings),
    )
    return
  }
  const byChar = new Map<number, TrieNode[]>()
  rest.forEach((node, i) => {
    const code = literals[i]!.charCodeAt(at)
    const group = byChar.get(code)
    if (group) group.push(node)
    else byChar.set(code, [node])
  })
  const cases = [...byChar].map(([code, group]) => ({
    open: `case ${code}: { // ${safeComment(chainOf(group[0]!).literal.slice(0, at + 1))}`,
    write: (c: WalkContext): void => emitStaticTree(c, group, j, at + 1, depth, bindings),
  }))
  emitCases(ctx, `path.charCodeAt(${j} + ${at})`, cases, j, bindings)
}

/** A chain of static nodes with one child each is tested as one literal ("git/refs"). */
function chainOf(node: TrieNode): { literal: string; last: TrieNode } {
  let literal = staticValue(node)!
  let last = node
  while (
    last.terminal === null &&
    last.children.length === 1 &&
    staticValue(last.children[0]!) !== null
  ) {
    last = last.children[0]!
    literal += '/' + staticValue(last)
  }
  return { literal, last }
}

/** Tests a static child's literal, but for its first `checked` characters, then what is below. */
function emitStaticChild(
  ctx: WalkContext,
  node: TrieNode,
  j: string,
  depth: number,
  bindings: Binding[],
  checked = 0,
): void {
  const { literal, last } = chainOf(node)
  const e = `e${depth}`
  // A literal the switches tested whole is a block, not an `if (true)`.
  const open =
    checked >= literal.length
      ? `{ // ${safeComment(literal)}`
      : `if (${hasLiteral(literal, j, checked)}) {`
  ctx.out.block(open, () => {
    ctx.out.line(`const ${e} = ${j} + ${literal.length}`)
    ctx.out.block(`if (${e} === len || path.charCodeAt(${e}) === 47) {`, () =>
      emitNodeBody(ctx, last, e, depth, bindings),
    )
  })
}

/**
 * The only parameter child is an int: one digit loop finds where it ends and its value (no
 * indexOf for the '/', no second pass); 1-15 digits, then '/' or the end of the path.
 */
function emitIntChild(
  ctx: WalkContext,
  node: TrieNode,
  j: string,
  depth: number,
  bindings: Binding[],
): void {
  const e = `e${depth}`
  const v = `v${depth}`
  const binding: Binding = { segment: node.segment as ParamSegment, start: j, end: e, int: v }
  ctx.out.block('{', () => {
    ctx.out.line(`let ${e} = ${j}, ${v} = 0`)
    ctx.out.line(
      `for (let c; ${e} < len && (c = path.charCodeAt(${e}) - 48) >= 0 && c <= 9; ${e}++) ${v} = ${v} * 10 + c`,
    )
    ctx.out.block(
      `if (${e} !== ${j} && ${e} - ${j} <= 15 && (${e} === len || path.charCodeAt(${e}) === 47)) {`,
      () => emitNodeBody(ctx, node, e, depth, [...bindings, binding]),
    )
  })
}

function emitParamChild(
  ctx: WalkContext,
  node: TrieNode,
  j: string,
  e: string,
  depth: number,
  bindings: Binding[],
): void {
  const segment = node.segment as ParamSegment
  const binding: Binding = { segment, start: j, end: e, int: null }
  const body = (): void => emitNodeBody(ctx, node, e, depth, [...bindings, binding])
  switch (segment.type) {
    case 'string':
      body()
      return
    case 'int': {
      binding.int = `v${depth}`
      ctx.out.line(`const v${depth} = int(path, ${j}, ${e})`)
      ctx.out.block(`if (v${depth} !== -1) {`, body)
      return
    }
    case 'hex':
    case 'uuid':
    case 'slug':
      // Built-in types are character loops: no regex engine on the hot path.
      ctx.out.block(`if (${segment.type}(path, ${j}, ${e})) {`, body)
      return
    default: {
      ctx.out.block(`if (${ctx.regexes.test(segment, j, e)}) {`, body)
    }
  }
}

/** After a node's segment matched, ending at `e`: the node's own route, or its children. */
function emitNodeBody(
  ctx: WalkContext,
  node: TrieNode,
  e: string,
  depth: number,
  bindings: Binding[],
): void {
  const emptyCatchAll = node.children.find(
    (c) => c.segment?.kind === 'param' && c.segment.type === 'catchall' && c.segment.allowEmpty,
  )
  const atEnd = node.terminal ?? emptyCatchAll?.terminal
  if (atEnd) {
    const extra = node.terminal
      ? []
      : [{ segment: emptyCatchAll!.segment as ParamSegment, start: "''", end: "''", int: null }]
    const hit = `return ${terminalResult(ctx, atEnd, [...bindings, ...extra])}`
    if (node.children.length === 0) {
      ctx.out.line(`if (${e} === len) ${hit}`)
      return
    }
    ctx.out.block(`if (${e} === len) {`, () => ctx.out.line(hit), '} else {')
  } else if (node.children.length > 0) {
    ctx.out.line(`if (${e} !== len) {`)
  } else {
    return
  }
  ctx.out.indent(() => {
    const j = `j${depth + 1}`
    ctx.out.line(`const ${j} = ${e} + 1`)
    emitChildren(ctx, node, j, depth + 1, bindings)
  })
  ctx.out.line('}')
}

function terminalResult(ctx: WalkContext, variant: Variant, bindings: Binding[]): string {
  const params = variant.segments.filter((s): s is ParamSegment => s.kind === 'param')
  // Two or more values that may hold a '%' share one search: P, the first '%' from the first of
  // them (-1: none, so every value is a plain slice). Declared by the shard function.
  const shared = bindings.filter(mayNeedDecoding).length >= 2
  let searched = false
  const fields = params.map((segment, i) => {
    const binding = bindings[i]!
    if (!shared || !mayNeedDecoding(binding)) return `${propKey(segment.name)}: ${valueOf(binding)}`
    const { start, end } = binding
    const test = searched ? 'P === -1' : `(P = path.indexOf('%', ${start})) === -1`
    searched = true
    return `${propKey(segment.name)}: ${test} ? path.slice(${start}, ${end}) : dec(path, ${start}, ${end})`
  })
  const absent = variant.absent.map((name) => `${propKey(name)}: null`)
  return ctx.result(variant, [...fields, ...absent])
}

// Built-in types match only [0-9A-Za-z-]: no '%' to decode.
const PLAIN_TYPES = new Set(['int', 'uuid', 'hex', 'slug'])

/** Whether a value of `segment` may hold a '%' escape (and is decoded then). */
function mayHoldEscapes(segment: ParamSegment): boolean {
  return !PLAIN_TYPES.has(segment.type)
}

/** Whether this binding's value may need decoding (an empty catch-all's '' never does). */
function mayNeedDecoding(binding: Binding): boolean {
  return binding.start !== "''" && mayHoldEscapes(binding.segment)
}

/**
 * Whether a hit under `node` may share a '%' search between parameters (see terminalResult):
 * a conservative bound, as it cannot see empty catch-alls, so `P` may be declared and unused.
 */
export function usesPercentSearch(node: TrieNode): boolean {
  const decodable =
    node.terminal?.segments.filter((s) => s.kind === 'param' && mayHoldEscapes(s)).length ?? 0
  return decodable >= 2 || node.children.some(usesPercentSearch)
}

function valueOf(binding: Binding): string {
  if (binding.int) return binding.int
  if (binding.start === "''") return "''"
  return `${mayHoldEscapes(binding.segment) ? 'dec(path, ' : 'path.slice('}${binding.start}, ${binding.end})`
}
