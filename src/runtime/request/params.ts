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
