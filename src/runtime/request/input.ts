/**
 * Reading parsed input by dotted path (`user.address.city`, `items.0.name`), and the Laravel-style
 * selections `only`, `except`, `filled`. Every lookup is an own-property lookup.
 */
import { copyDeep, emptyParams, FORBIDDEN_KEYS, isRecord, ownValue, type Params } from './params.js'

/**
 * What the body accessors read: a map of fields, or the list a JSON list body is. A list reads by
 * index like a map with numeric keys (`0.name`), as a PHP array does in Laravel.
 */
export type Fields = Params | unknown[]

/** The value at a dotted `path`, or `found: false`. */
export function lookup(root: unknown, path: string): { found: boolean; value: unknown } {
  let node = root
  for (const segment of segmentsOf(root, path)) {
    const step = ownValue(node, segment)
    if (!step.found) return step
    node = step.value
  }
  return { found: true, value: node }
}

/**
 * The segments of `path` in `root`: the key itself when `root` has it (a query or form key may
 * hold dots, `utm.source` or a field named `user.name`, which `query()`/`input()` list but a
 * dotted lookup never reached), else its dotted parts. As cookie() and Laravel's Arr::get read it.
 */
function segmentsOf(root: unknown, path: string): string[] {
  return path.includes('.') && ownValue(root, path).found ? [path] : path.split('.')
}

/** The value at `path`, or `fallback` when absent. */
export function valueAt(root: unknown, path: string, fallback: unknown): unknown {
  const { found, value } = lookup(root, path)
  return found ? value : fallback
}

/** A copy of the value at `path` (a scalar as it is), or `fallback` when absent. */
export function copyAt(root: unknown, path: string, fallback: unknown): unknown {
  const { found, value } = lookup(root, path)
  return found ? copyDeep(value) : fallback
}

/**
 * `query()`-style selection, copied (callers may change what they get): all, several keys (null
 * when missing), or one key.
 */
export function select(
  source: Params,
  key: string | readonly string[] | undefined,
  fallback: unknown,
): unknown {
  if (key === undefined) return copyDeep(source)
  if (typeof key === 'string') return copyAt(source, key, fallback)
  const result = emptyParams()
  for (const k of key) result[k] = copyAt(source, k, null)
  return result
}

/** Present and not null, not a blank string, not an empty array (Laravel's `filled`). */
export function isFilled(value: unknown): boolean {
  if (value === null || value === undefined) return false
  if (typeof value === 'string') return value.trim() !== ''
  if (Array.isArray(value)) return value.length > 0
  return true
}

/** Flattens `only('a', ['b', 'c'])`-style arguments. */
export function flattenKeys(keys: readonly (string | readonly string[])[]): string[] {
  return keys.flatMap((key) => (typeof key === 'string' ? [key] : [...key]))
}

/**
 * A new map holding copies of the `paths` that exist, nested as in the source. A list on the way,
 * the root included, becomes a map keyed by index (`only('1.a')` of `[x, { a: 2 }]` is
 * `{ 1: { a: 2 } }`), as Laravel's Arr::only keeps PHP's numeric keys.
 */
export function pick(root: Fields, paths: readonly string[]): Params {
  const result = emptyParams()
  for (const path of paths) {
    const { found, value } = lookup(root, path)
    if (found) setPath(result, segmentsOf(root, path), copyDeep(value))
  }
  return result
}

/**
 * A deep copy of `root` without `paths`, copied once: the keys are removed from the copy. The
 * root and the maps on each path come back as parameter maps (null prototype), as they did when
 * those were copied on their own. A list, the root included, stays a list: removed items close
 * the gap (`except('0')` of `[x, y]` is `[y]`), where PHP's unset would leave keys `1…`.
 */
export function omit(root: Fields, paths: readonly string[]): Fields {
  const result = Array.isArray(root) ? copyDeep(root) : asParamMap(copyDeep(root))
  const lists = new Set<unknown[]>()
  for (const path of paths) removePath(result, segmentsOf(result, path), lists)
  // List items are only marked while paths are removed: each index names an item of the input,
  // not of a list that an earlier removal had already shifted (`items.0`, `items.1`).
  for (const list of lists) compact(list)
  return result
}

// Marks a removed list item until `compact` drops it.
const REMOVED = Symbol('removed')

function setPath(root: Params, segments: string[], value: unknown): void {
  if (segments.some((s) => FORBIDDEN_KEYS.has(s))) return
  let node = root
  for (const segment of segments.slice(0, -1)) {
    const child = node[segment]
    node = isRecord(child) ? child : ((node[segment] = emptyParams()) as Params)
  }
  node[segments[segments.length - 1]!] = value
}

// `root` is a copy of our own, and so is every container in it (copyDeep copies each one
// isRecord accepts), so this removes in place.
function removePath(root: Fields, segments: string[], lists: Set<unknown[]>): void {
  let node: Fields = root
  for (const [i, segment] of segments.entries()) {
    const { found, value } = ownValue(node, segment)
    if (!found) return
    if (i === segments.length - 1) return removeKey(node, segment, lists)
    if (Array.isArray(value)) node = value
    else if (isRecord(value)) node = asParamMap(value)
    else return
  }
}

function removeKey(node: Fields, key: string, lists: Set<unknown[]>): void {
  if (!Array.isArray(node)) return void delete node[key]
  node[Number(key)] = REMOVED
  lists.add(node)
}

function compact(list: unknown[]): void {
  let kept = 0
  for (const item of list) if (item !== REMOVED) list[kept++] = item
  list.length = kept
}

/** `map` itself, as a parameter map: a copy of our own, so its prototype is changed in place. */
function asParamMap(map: Params): Params {
  if (Object.getPrototypeOf(map) !== null) Object.setPrototypeOf(map, null)
  return map
}
