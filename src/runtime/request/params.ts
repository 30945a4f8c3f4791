/**
 * Parsed input (query, form fields, cookies) lives in objects without a prototype, so a
 * client-chosen key can never reach `Object.prototype`, and reading `constructor` or
 * `toString` finds nothing. The three keys below are dropped wherever input is parsed, because
 * code downstream (deep-merge helpers, `Object.assign`) may treat them specially even when we don't.
 * JSON bodies are the exception: they stay ordinary objects for speed (see json.ts), and the
 * accessors read own properties only.
 */

/** A parsed parameter map (null prototype). */
export type Params = Record<string, unknown>

/**
 * A parameter map a caller gives (`FwRequest.create()`'s query, post and cookies, the `with*`
 * copies): any object, its keys the names. `Record<string, unknown>` refused a value typed with an
 * interface (`post: login`, `login: Login`), which has no index signature; one of `any` is the
 * only index signature every object type meets. A number, string or boolean is still refused.
 * @example
 * const post: ParamsInit = login // interface Login { email: string; password: string }
 */
export type ParamsInit = { readonly [key: string]: any }

export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
])

/** A new empty parameter map without a prototype. */
export function emptyParams(): Params {
  return Object.create(null) as Params
}

/** Whether `value` is a key/value container (a plain or null-prototype object, not an array). */
export function isRecord(value: unknown): value is Params {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype
}

/** A shallow null-prototype copy of `source`. */
export function copyParams(source: Params): Params {
  const copy = emptyParams()
  for (const key of Object.keys(source)) copy[key] = source[key]
  return copy
}

/**
 * A deep copy of the plain objects and arrays in `value`, for accessors that hand parsed input to
 * callers: the request is immutable, so what they change must not reach it. Objects keep their
 * kind (null-prototype or ordinary); anything else (uploaded files, dates, ...) is kept by
 * reference. A scalar costs one `typeof`. Not structuredClone: it would turn uploaded files
 * into plain objects and null-prototype maps into ordinary ones.
 * @example
 * copyDeep({ user: { tags: ['a'] } }) // a new object, a new user, a new tags array
 */
export function copyDeep<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  try {
    return copyTree(value, 0) as T
  } catch (error) {
    if (error !== TOO_DEEP) throw error
    return copyNode(value, new Map()) as T
  }
}

// Parsed input is at most 32 levels deep and has no cycles, so it is copied without tracking
// what was seen: a Map of containers made the copy of a 1 KB JSON body ~3x slower. Deeper than
// this, the value was given by hand (withParsedBody) and may contain itself: copyNode takes over.
const TREE_DEPTH = 64
const TOO_DEEP = new Error('deeper than a parsed body')

function copyTree(value: object, depth: number): unknown {
  if (depth > TREE_DEPTH) throw TOO_DEEP
  if (Array.isArray(value)) {
    const list = value.slice()
    for (let i = 0; i < list.length; i++) {
      const item: unknown = list[i]
      if (typeof item === 'object' && item !== null) list[i] = copyTree(item, depth + 1)
    }
    return list
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== null && proto !== Object.prototype) return value
  const source = value as Params
  const copy: Params = proto === null ? emptyParams() : {}
  for (const key of Object.keys(source)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue
    const item = source[key]
    copy[key] = typeof item === 'object' && item !== null ? copyTree(item, depth + 1) : item
  }
  return copy
}

// `seen` maps each container copied so far to its copy, so a value that contains itself is
// copied as one that contains itself.
function copyNode(value: object, seen: Map<object, unknown>): unknown {
  const isArray = Array.isArray(value)
  if (!isArray && !isRecord(value)) return value
  const known = seen.get(value)
  if (known !== undefined) return known
  if (isArray) {
    const list: unknown[] = []
    seen.set(value, list)
    for (const item of value as unknown[]) list.push(copyChild(item, seen))
    return list
  }
  const source = value as Params
  const copy: Params = Object.getPrototypeOf(source) === null ? emptyParams() : {}
  seen.set(value, copy)
  for (const key of Object.keys(source)) {
    // Parsers drop these keys; a value given by hand may still carry them (see FORBIDDEN_KEYS).
    if (!FORBIDDEN_KEYS.has(key)) copy[key] = copyChild(source[key], seen)
  }
  return copy
}

function copyChild(value: unknown, seen: Map<object, unknown>): unknown {
  return typeof value === 'object' && value !== null ? copyNode(value, seen) : value
}

/** Own-property lookup: inherited members (`toString`, `constructor`) are never found. */
export function ownValue(container: unknown, key: string): { found: boolean; value: unknown } {
  if (Array.isArray(container)) {
    const index = /^(?:0|[1-9]\d*)$/.test(key) ? Number(key) : -1
    return index >= 0 && index < container.length
      ? { found: true, value: container[index] }
      : { found: false, value: undefined }
  }
  if (isRecord(container) && Object.hasOwn(container, key)) {
    return { found: true, value: container[key] }
  }
  return { found: false, value: undefined }
}
