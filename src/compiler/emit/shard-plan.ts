/**
 * Splits one host group's method tables into shards. A shard holds every method's routes under
 * one first path segment (`users.mjs`); routes whose first segment is a parameter go to
 * `__dynamic.mjs`, the root path to `__root.mjs`. Splitting keeps each generated function far
 * below V8's ~60 KB bytecode limit for optimisation. shards.ts emits them.
 */
import type { Variant } from '../analyze.js'
import { staticValue, type MethodKey, type MethodTable, type TrieNode } from '../trie.js'

export interface ShardPart {
  statics: Map<string, Variant>
  /** The trie node of the bucket (static shards), or a root holding the dynamic children. */
  node: TrieNode | null
}

export interface Shard {
  file: string
  kind: 'bucket' | 'root' | 'dynamic'
  bucket: string
  methods: Map<MethodKey, ShardPart>
}

/**
 * Groups a host group's tables into shards, each method's part by first path segment. Static
 * paths of the methods in `inlined` are matched in index.mjs instead, so shards leave them out.
 */
export function planShards(
  tables: readonly MethodTable[],
  filePrefix: string,
  taken: Set<string>,
  inlined: ReadonlySet<MethodKey>,
): Shard[] {
  const shards = new Map<string, Shard>()
  const shardFor = (kind: Shard['kind'], bucket: string): Shard => {
    const id = `${kind}:${bucket}`
    let shard = shards.get(id)
    if (!shard) {
      const base = kind === 'bucket' ? bucket : `__${kind}`
      shard = { file: uniqueFile(filePrefix + base, taken), kind, bucket, methods: new Map() }
      shards.set(id, shard)
    }
    return shard
  }
  const partOf = (shard: Shard, method: MethodKey): ShardPart => {
    let part = shard.methods.get(method)
    if (!part) shard.methods.set(method, (part = { statics: new Map(), node: null }))
    return part
  }
  for (const table of tables) {
    for (const [path, variant] of inlined.has(table.method) ? [] : table.statics) {
      const bucket = path === '/' ? null : path.slice(1).split('/')[0]!
      partOf(
        bucket === null ? shardFor('root', '') : shardFor('bucket', bucket),
        table.method,
      ).statics.set(path, variant)
    }
    const dynamic: TrieNode[] = []
    for (const child of table.root.children) {
      const bucket = staticValue(child)
      if (bucket === null) dynamic.push(child)
      else partOf(shardFor('bucket', bucket), table.method).node = child
    }
    if (dynamic.length > 0) {
      partOf(shardFor('dynamic', ''), table.method).node = { ...table.root, children: dynamic }
    }
  }
  return sortShards([...shards.values()])
}

function sortShards(shards: Shard[]): Shard[] {
  const rank = { root: 0, bucket: 1, dynamic: 2 }
  return shards.sort((a, b) => rank[a.kind] - rank[b.kind] || (a.bucket < b.bucket ? -1 : 1))
}

/**
 * A file-system-safe, case-insensitively unique module name (without `.mjs`): a domain shard keeps
 * its host pattern's braces (`{account}.example.com.users`), legal in file names everywhere.
 */
function uniqueFile(base: string, taken: Set<string>): string {
  const safe = base
    .replace(/[^A-Za-z0-9._{}-]/g, '_')
    .replace(/^\./, '_')
    .slice(0, 80)
  let name = safe
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${safe}~${n}`
  taken.add(name.toLowerCase())
  return name
}

/** Every variant a shard part can return: its static paths and its trie's terminals. */
export function partVariants(part: ShardPart): Set<Variant> {
  const variants = new Set(part.statics.values())
  const visit = (node: TrieNode): void => {
    if (node.terminal) variants.add(node.terminal)
    for (const child of node.children) visit(child)
  }
  if (part.node) visit(part.node)
  return variants
}
