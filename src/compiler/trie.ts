/**
 * Builds the per-method matching structures of one host group: a map of fully static paths, and a
 * trie of the other variants whose children are sorted by precedence, so that a depth-first walk
 * (terminal first, then children in order) finds the same route as the documented precedence.
 */
import type { HttpMethod } from '../shared/methods.js'
import type { Segment } from '../shared/pattern.js'
import type { AnalyzedRoute, Variant } from './analyze.js'
import { compareKey, compareKeys, type SegmentKey } from './precedence.js'

export interface TrieNode {
  key: SegmentKey | null
  /** The segment shape (param names differ between routes sharing the node; types do not). */
  segment: Segment | null
  terminal: Variant | null
  children: TrieNode[]
}

/** A method, or ANY: every route whatever its method (answers "does any method match?"). */
export type MethodKey = HttpMethod | 'ANY'

/** The order tables are emitted in (ANY last: it only serves misses). */
export const METHOD_KEYS: readonly MethodKey[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'ANY',
]

export interface MethodTable {
  method: MethodKey
  /** Fully static variants by request path ('/' for the root). */
  statics: Map<string, Variant>
  root: TrieNode
}

/** Builds the tables of every method that has routes in `routes` (one host group), and ANY. */
export function buildMethodTables(routes: readonly AnalyzedRoute[]): MethodTable[] {
  const byMethod = new Map<MethodKey, Variant[]>()
  for (const route of routes) {
    const list = byMethod.get(route.record.method) ?? []
    list.push(...route.variants)
    byMethod.set(route.record.method, list)
  }
  byMethod.set(
    'ANY',
    routes.flatMap((r) => r.variants),
  )
  return [...byMethod].map(([method, variants]) => buildMethodTable(method, variants))
}

function buildMethodTable(method: MethodKey, variants: Variant[]): MethodTable {
  const statics = new Map<string, Variant>()
  const root: TrieNode = { key: null, segment: null, terminal: null, children: [] }
  const sorted = [...variants].sort(
    (a, b) => compareKeys(a.keys, b.keys) || a.route.record.id - b.route.record.id,
  )
  const index = new Map<TrieNode, Map<string, TrieNode>>()
  for (const variant of sorted) {
    if (variant.segments.every((s) => s.kind === 'static')) {
      const path = '/' + variant.segments.map((s) => (s as { value: string }).value).join('/')
      if (!statics.has(path)) statics.set(path, variant)
    } else {
      insert(root, variant, index)
    }
  }
  return { method, statics, root }
}

/**
 * Adds a variant's path to the trie. Children are found through `index` (a node's children by
 * key) and sorted only when one arrives out of order: a linear search and a sort per insert made
 * a node of 10,000 children (`/api/res{i}/{id}`) take ~10 s to build. Variants come sorted, so a
 * new child almost always goes last.
 */
function insert(
  root: TrieNode,
  variant: Variant,
  index: Map<TrieNode, Map<string, TrieNode>>,
): void {
  let node = root
  variant.segments.forEach((segment, i) => {
    const key = variant.keys[i]!
    let children = index.get(node)
    if (!children) index.set(node, (children = new Map()))
    const id = `${key.rank}:${key.order}:${key.literal}`
    let child = children.get(id)
    if (!child) {
      child = { key, segment, terminal: null, children: [] }
      children.set(id, child)
      const last = node.children.at(-1)
      node.children.push(child)
      if (last !== undefined && compareKey(last.key!, key) > 0)
        node.children.sort((a, b) => compareKey(a.key!, b.key!))
    }
    node = child
  })
  node.terminal ??= variant
}

/** The first segment's literal of a static child, or null for parameter children. */
export function staticValue(node: TrieNode): string | null {
  return node.segment?.kind === 'static' ? node.segment.value : null
}
