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
import { CodeWriter, hasLiteral, lit, propKey } from './code.js'
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
  const vars = [
    ...new Set(
      [j, ...bindings.flatMap((b) => [b.start, b.end, b.int ?? ''])].filter((v) =>
        /^[a-z]\d+$/.test(v),
      ),
    ),
  ]
  const args = ['path', 'len', 'hp', ...vars].join(', ')
  for (const run of runs) {
    const part = tryEmit(ctx, (c) => emitChildrenInPlace(c, run, j, depth, bindings))
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
    ctx.out.line(`{ const r = ${name}(${args}); if (r !== null) return r }`)
  }
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

export interface Attempt {
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
    for (const node of nodes) emitStaticChild(ctx, node, j, depth, bindings)
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
  ctx.out.block(`switch (path.charCodeAt(${j})) {`, () => {
    for (const [code, group] of byFirst) {
      ctx.out.block(`case ${code}: {`, () => {
        for (const node of group) emitStaticChild(ctx, node, j, depth, bindings, true)
        ctx.out.line('break')
      })
    }
  })
}

function emitStaticChild(
  ctx: WalkContext,
  node: TrieNode,
  j: string,
  depth: number,
  bindings: Binding[],
  firstChecked = false,
): void {
  // A chain of static nodes with one child each is tested as one literal ("git/refs").
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
  const e = `e${depth}`
  ctx.out.block(`if (${hasLiteral(literal, j, firstChecked)}) {`, () => {
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
