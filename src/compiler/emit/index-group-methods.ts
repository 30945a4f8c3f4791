/**
 * The method functions of `index.mjs`, one per host group and method (`g0GET`): the static paths
 * matched in place, then the root shard, the first segment's shard, and the dynamic shard.
 */
import type { Variant } from '../analyze.js'
import type { MethodKey } from '../trie.js'
import { CodeWriter, emitStaticSwitch, lit } from './code.js'
import {
  BUCKETS_MAX,
  emitBucketTree,
  type BucketCall,
  type BucketOutline,
} from './index-buckets.js'
import type { PlannedGroup } from './modules.js'
import type { Shard } from './shards.js'

/** How a bucket shard's miss is answered (see emitGroupMethod). */
type MissRule = 'none' | 'own' | 'any-walk'

/** A bucket shard of a group, with its index among the group's shards. */
type Bucket = { shard: Shard; s: number }

/** The expression calling a shard's method, loading the shard on first use. */
const shardFn = (group: PlannedGroup, s: number, method: MethodKey): string =>
  `(${group.id}s${s} ??= shard(${lit(group.shards[s]!.file)})).${method}`

/**
 * One host group's entry for one method: static paths, root, the first segment's shard, dynamic.
 * When `only` (the group is the app's only one) and no path starts with a parameter, nothing
 * outside a bucket's shard can match its paths, so a miss there is settled without match()'s
 * any-method walk from the index: at once when no other method has routes in the shard (or
 * static paths inlined in the index under it), else by the shard's own any-method walk
 * (ANY is never inlined, so its shard part has every path). Returns whether it used noneIn().
 */
export function emitGroupMethod(
  out: CodeWriter,
  group: PlannedGroup,
  method: MethodKey,
  only: boolean,
): boolean {
  const index = (kind: Shard['kind']): number =>
    group.shards.findIndex((s) => s.kind === kind && s.methods.has(method))
  const root = index('root')
  const dynamic = index('dynamic')
  const missRule = missRuleOf(group, method, only)
  let usesNoneIn = false
  const split: string[] = []
  out.block(`function ${group.id}${method}(path, hp) {`, () => {
    out.line('const len = path.length')
    emitStaticSwitch(
      out,
      group.inlined.get(method) ?? new Map<string, Variant>(),
      (v) => `HIT${v.route.record.id}`,
    )
    if (root !== -1) emitRootCall(out, group, root, method)
    usesNoneIn = emitBucketDispatch(out, group, method, missRule, split)
    out.line(dynamic !== -1 ? `return ${shardFn(group, dynamic, method)}(path, hp)` : 'return null')
  })
  out.line()
  for (const fn of split) out.line(fn)
  return usesNoneIn
}

/** The miss rule of each bucket shard of `group` for `method` (see emitGroupMethod). */
function missRuleOf(
  group: PlannedGroup,
  method: MethodKey,
  only: boolean,
): (shard: Shard) => MissRule {
  const settled = only && method !== 'ANY' && !group.shards.some((s) => s.kind === 'dynamic')
  const othersInlined = new Set<string>()
  for (const [m, statics] of group.inlined) {
    if (m === method || m === 'ANY') continue
    for (const path of statics.keys()) othersInlined.add(path.slice(1).split('/')[0]!)
  }
  return (shard) => {
    if (!settled || !shard.methods.has('ANY')) return 'none'
    const exclusive = [...shard.methods.keys()].every((m) => m === method || m === 'ANY')
    return exclusive && !othersInlined.has(shard.bucket) ? 'own' : 'any-walk'
  }
}

function emitRootCall(out: CodeWriter, group: PlannedGroup, root: number, method: MethodKey): void {
  out.block('if (len === 1) {', () => {
    out.line(`const r = ${shardFn(group, root, method)}(path, 1, hp)`)
    out.line('if (r !== null) return r')
  })
}

/** The first segment's shard, by the bucket trie; returns whether a call used noneIn(). */
function emitBucketDispatch(
  out: CodeWriter,
  group: PlannedGroup,
  method: MethodKey,
  missRule: (shard: Shard) => MissRule,
  split: string[],
): boolean {
  const buckets = group.shards
    .map((shard, s) => ({ shard, s }))
    .filter(({ shard }) => shard.kind === 'bucket' && shard.methods.has(method))
  if (buckets.length === 0) return false
  let usesNoneIn = false
  // No indexOf('/') to find the first segment: a character trie over the bucket names, each
  // name ending where the path ends or has a '/', which is then e1 (a constant per bucket).
  const call = bucketCall(group, method, missRule, () => (usesNoneIn = true))
  const tree = (outline: BucketOutline | null): string => {
    const w = new CodeWriter()
    w.block('buckets: {', () => emitBucketTree(w, buckets, 1, call, 'break buckets', outline))
    return w.toString()
  }
  // In one piece unless too large for V8 to optimise: 1,000 first segments made ~220 K
  // characters (4-10x slower lookups), so the largest cases go to functions of their own.
  let text = tree(null)
  if (text.length > BUCKETS_MAX)
    text = tree({ functions: split, name: () => `${group.id}${method}B${split.length}` })
  for (const line of text.trimEnd().split('\n')) out.line(line)
  return usesNoneIn
}

/** A bucket's shard call, answering its miss by the bucket's rule (`usedNoneIn` when it tests). */
function bucketCall(
  group: PlannedGroup,
  method: MethodKey,
  missRule: (shard: Shard) => MissRule,
  usedNoneIn: () => void,
): BucketCall<Bucket> {
  return ({ shard, s }, e1, leave) => {
    const call = `${shardFn(group, s, method)}(path, ${e1}, hp)`
    const rule = missRule(shard)
    if (rule === 'own') return `{ const r = ${call}; return r !== null ? r : settled(path) }`
    if (rule === 'none') return `{ const r = ${call}; if (r !== null) return r; ${leave} }`
    usedNoneIn()
    return `{ const r = ${call}; if (r !== null) return r; if (noneIn(${shardFn(group, s, 'ANY')}, path, ${e1}, hp)) return settled(path); ${leave} }`
  }
}
