/**
 * Keeps a shard's walk functions small enough for V8 to optimise: a part of the walk is emitted
 * on trial (tryEmit) to size it, then written in place (commit) or as a function of its own
 * (outline), the largest first.
 */
import type { TrieNode } from '../trie.js'
import { CodeWriter } from './code.js'
import type { Binding, WalkContext } from './walk.js'

// V8 never optimises a function of more than ~60 KB of bytecode (this code makes ~0.6-0.9 bytes
// of bytecode per character), so one walk of megabytes (a shard of thousands of routes under one
// first segment: `/api/...`) ran in the interpreter, ~20x slower, whatever the shard layout. A
// method function whose static paths and walk would pass FUNCTION_MAX characters is written with
// `outline` on: the tests of a node's children that pass OUTLINE_MAX characters go to functions
// of their own, each testing a run of them. Smaller ones (the GitHub API's 160 `/repos` routes:
// 48 K characters, 30 KB of bytecode) stay one function: a call per run would cost them time.
export const FUNCTION_MAX = 56_000
export const OUTLINE_MAX = 24_000
// Up to this many nodes, a subtree is always small enough: written at once, without sizing.
export const SMALL_SUBTREE = 16

export interface Attempt {
  text: string
  functions: string[]
}

/** What `write` emits, and the functions it split off, without adding them to `ctx` yet. */
export function tryEmit(ctx: WalkContext, write: (c: WalkContext) => void): Attempt {
  const c: WalkContext = { ...ctx, out: new CodeWriter(), functions: [] }
  write(c)
  return { text: c.out.toString(), functions: c.functions }
}

/** Writes an attempt into `ctx`: its text in place, and the functions it split off. */
export function commit(ctx: WalkContext, attempt: Attempt): void {
  for (const line of attempt.text.trimEnd().split('\n')) ctx.out.line(line)
  ctx.functions.push(...attempt.functions)
}

/** Makes `part` a function of its own (W0, W1, ...); returns the call. */
export function outline(ctx: WalkContext, part: Attempt, j: string, bindings: Binding[]): string {
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
export function emitCases(
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

/** The largest of `parts`, that must be functions of their own for the rest to fit OUTLINE_MAX. */
export function largestOver(parts: Attempt[]): Set<Attempt> {
  let total = parts.reduce((n, part) => n + part.text.length, 0)
  const outlined = new Set<Attempt>()
  for (const part of [...parts].sort((a, b) => b.text.length - a.text.length)) {
    if (total <= OUTLINE_MAX) break
    outlined.add(part)
    total -= part.text.length
  }
  return outlined
}

/** Writes `part` in place, or as a call of a function of its own when it is one of `outlined`. */
export function commitOrCall(
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
export function nodeCount(node: TrieNode): number {
  let count = nodeCounts.get(node)
  if (count === undefined) {
    count = node.children.reduce((n, c) => n + nodeCount(c), 1)
    nodeCounts.set(node, count)
  }
  return count
}
