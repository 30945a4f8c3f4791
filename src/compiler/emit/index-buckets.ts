/**
 * The first-segment dispatch of a group's method function in `index.mjs`: a character trie over
 * the names of the group's bucket shards, calling the shard whose name the first segment is.
 */
import { CodeWriter, hasLiteral, safeComment } from './code.js'
import type { Shard } from './shards.js'

// The largest bucket trie kept in a group's method function (see FUNCTION_MAX in walk-outline.ts).
export const BUCKETS_MAX = 24_000

/** A bucket's call (see emitBucketTree); `leave` leaves the trie when the shard had no hit. */
export type BucketCall<B> = (bucket: B, e1: number, leave: string) => string

/** Where the split-off parts of a large bucket trie go (top-level functions of index.mjs). */
export interface BucketOutline {
  functions: string[]
  name: () => string
}

/**
 * Dispatch on the first segment as a character trie over the bucket names: a switch on the
 * character at `at` while several names remain, shared prefixes and the rest of a lone name
 * compared inline. A name is matched when the path ends after it or has a '/' there; then
 * `call(bucket, e1, leave)` (e1: where the first segment ends) runs, which returns or leaves the
 * trie (`leave`). 300 buckets cost a few switches, not 300 literal tests. With `outline`, a
 * switch whose cases pass BUCKETS_MAX has its largest cases as functions of their own (a miss
 * there returns null, as falling out of the trie does).
 */
export function emitBucketTree<B extends { shard: Shard }>(
  out: CodeWriter,
  list: readonly B[],
  at: number,
  call: BucketCall<B>,
  leave: string,
  outline: BucketOutline | null,
): void {
  // A name fully compared: it is the segment if the path ends or has a '/' here.
  const done = list.find((b) => b.shard.bucket.length + 1 === at)
  if (done !== undefined)
    out.line(`if (len === ${at} || path.charCodeAt(${at}) === 47) ${call(done, at, leave)}`)
  const rest = list.filter((b) => b !== done)
  if (rest.length === 0) return
  // A prefix every name left shares ("res" of res0…res299, or the whole rest of a lone name)
  // is one test, not a switch per character.
  const shared = sharedLength(rest, at)
  if (shared > 0) {
    const first = rest[0]!.shard.bucket
    out.block(`if (${hasLiteral(first.slice(at - 1, at - 1 + shared), String(at))}) {`, () =>
      emitBucketTree(out, rest, at + shared, call, leave, outline),
    )
    return
  }
  emitBucketSwitch(out, rest, at, call, leave, outline)
}

/** How many characters from `at` every name of `list` shares. */
function sharedLength(list: readonly { shard: Shard }[], at: number): number {
  let shared = 0
  const first = list[0]!.shard.bucket
  while (
    at - 1 + shared < first.length &&
    list.every((b) => b.shard.bucket[at - 1 + shared] === first[at - 1 + shared])
  )
    shared++
  return shared
}

/** The switch on the character at `at`, a case per character the names have there. */
function emitBucketSwitch<B extends { shard: Shard }>(
  out: CodeWriter,
  list: readonly B[],
  at: number,
  call: BucketCall<B>,
  leave: string,
  outline: BucketOutline | null,
): void {
  const byChar = new Map<number, B[]>()
  for (const b of list) {
    const code = b.shard.bucket.charCodeAt(at - 1)
    byChar.set(code, [...(byChar.get(code) ?? []), b])
  }
  const cases = [...byChar].sort((a, b) => a[0] - b[0])
  const outlined = outline === null ? new Set<number>() : largestCases(cases, at, call, leave)
  out.block(`switch (path.charCodeAt(${at})) {`, () => {
    for (const [code, group] of cases) {
      out.line(`case ${code}: // ${safeComment(String.fromCharCode(code))}`)
      out.indent(() => {
        if (outlined.has(code)) emitOutlinedCase(out, group, at, call, outline!)
        else emitBucketTree(out, group, at + 1, call, leave, outline)
        out.line('break')
      })
    }
  })
}

/** The characters whose cases must be functions of their own for the rest to fit BUCKETS_MAX. */
function largestCases<B extends { shard: Shard }>(
  cases: [number, B[]][],
  at: number,
  call: BucketCall<B>,
  leave: string,
): Set<number> {
  const outlined = new Set<number>()
  const sizes = cases.map(([code, group]) => {
    const w = new CodeWriter()
    emitBucketTree(w, group, at + 1, call, leave, null)
    return { code, size: w.toString().length }
  })
  let total = sizes.reduce((n, c) => n + c.size, 0)
  for (const { code, size } of sizes.sort((a, b) => b.size - a.size)) {
    if (total <= BUCKETS_MAX) break
    outlined.add(code)
    total -= size
  }
  return outlined
}

/** A case's trie as a function of its own (added to `outline`), and its call. */
function emitOutlinedCase<B extends { shard: Shard }>(
  out: CodeWriter,
  group: readonly B[],
  at: number,
  call: BucketCall<B>,
  outline: BucketOutline,
): void {
  const fn = new CodeWriter()
  const name = outline.name()
  // Its slot first, so functions stay in order of their names (nested ones after it).
  const slot = outline.functions.push('') - 1
  fn.block(`function ${name}(path, len, hp) {`, () => {
    emitBucketTree(fn, group, at + 1, call, 'return null', outline)
    fn.line('return null')
  })
  outline.functions[slot] = fn.toString()
  out.line(`{ const r = ${name}(path, len, hp); if (r !== null) return r }`)
}
