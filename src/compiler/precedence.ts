/**
 * Matching precedence. Routes are compared segment by segment; at the first segment where they
 * differ, the more specific kind wins: static → constrained (int, uuid, hex, slug, then custom
 * regexes in order of first appearance) → plain parameter → catch-all (`.+` before `.*`). A route
 * that is a prefix of another comes first; registration order breaks the remaining ties.
 */
import { BUILTIN_TYPES, type BuiltinType, type Segment } from '../shared/pattern.js'

export interface SegmentKey {
  /** 0 static, 1 constrained, 2 plain parameter, 3 catch-all. */
  rank: 0 | 1 | 2 | 3
  /** Order within the rank (constraint kind, or `.+`/`.*`). */
  order: number
  /** The static text or the regex source: what makes two keys of one order differ. */
  literal: string
}

/** Computes a segment's key; `regexOrder` numbers custom regexes by first appearance. */
export function segmentKey(segment: Segment, regexOrder: Map<string, number>): SegmentKey {
  if (segment.kind === 'static') return { rank: 0, order: 0, literal: segment.value }
  switch (segment.type) {
    case 'string':
      return { rank: 2, order: 0, literal: '' }
    case 'catchall':
      return { rank: 3, order: segment.allowEmpty ? 1 : 0, literal: '' }
    case 'regex': {
      const source = segment.regex!
      if (!regexOrder.has(source)) regexOrder.set(source, regexOrder.size)
      return { rank: 1, order: BUILTIN_TYPES.length + regexOrder.get(source)!, literal: source }
    }
    default:
      return { rank: 1, order: BUILTIN_TYPES.indexOf(segment.type as BuiltinType), literal: '' }
  }
}

export function compareKey(a: SegmentKey, b: SegmentKey): number {
  if (a.rank !== b.rank) return a.rank - b.rank
  if (a.order !== b.order) return a.order - b.order
  return a.literal < b.literal ? -1 : a.literal > b.literal ? 1 : 0
}

/** Lexicographic over segments; a prefix sorts before its extensions. */
export function compareKeys(a: readonly SegmentKey[], b: readonly SegmentKey[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const c = compareKey(a[i]!, b[i]!)
    if (c !== 0) return c
  }
  return a.length - b.length
}
