/**
 * The static children of a trie node in the walk: literals tested in turn, or split by switches
 * on their characters (a character trie) when there are many.
 */
import { staticValue, type TrieNode } from '../trie.js'
import { hasLiteral, safeComment } from './code.js'
// walk.ts and this file call each other (a static child's body is a walk of its own children).
import { emitNodeBody, type Binding, type WalkContext } from './walk.js'
import { commitOrCall, emitCases, largestOver, tryEmit } from './walk-outline.js'

/** Emits the tests of static children `nodes`, the segment starting at variable `j`. */
export function emitStaticChildren(
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
