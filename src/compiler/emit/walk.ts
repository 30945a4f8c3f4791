/**
 * Emits the unrolled walk of a trie: nested blocks that test each child in precedence order and
 * fall through to the next candidate when a deeper segment fails (backtracking). Parameters are
 * kept as index pairs and sliced only in the returned result.
 *
 * Variables at depth d: `jd` where the segment starts, `ed` where it ends (`len` or a '/').
 */
import type { ParamSegment } from '../../shared/pattern.js'
import type { Variant } from '../analyze.js'
import { staticValue, type TrieNode } from '../trie.js'
import type { CodeWriter } from './code.js'
import type { RegexPool } from './regex-pool.js'
import {
  commit,
  nodeCount,
  outline,
  OUTLINE_MAX,
  SMALL_SUBTREE,
  tryEmit,
  type Attempt,
} from './walk-outline.js'
import { terminalResult } from './walk-results.js'
import { emitStaticChildren } from './walk-statics.js'

/** A parameter matched so far: its value is path[start, end), or the variable `int` holds it. */
export interface Binding {
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
export function emitNodeBody(
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
