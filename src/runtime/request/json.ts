/**
 * JSON bodies. `JSON.parse` turns `{"__proto__": ...}` into an own property, harmless by itself
 * but a trap for `Object.assign` and deep-merge helpers downstream; so the result is copied into
 * null-prototype objects without the forbidden keys, counting keys and depth on the way.
 */
import { badRequest, payloadTooLarge } from '../http-error.js'
import { emptyParams, FORBIDDEN_KEYS } from './params.js'

export interface JsonLimits {
  /** Object keys, all levels together. */
  keys: number
  /** Nesting of objects and arrays; a flat object is 1. */
  depth: number
}

/**
 * Parses a JSON body. Malformed → 400; deeper than `limits.depth` or more than `limits.keys`
 * keys → 413 (a limit, like an oversized body). An empty text is an empty object.
 * @example
 * parseJson('{"user":{"name":"Ada"}}', { keys: 1000, depth: 32 }) // { user: { name: 'Ada' } }
 */
export function parseJson(text: string, limits: JsonLimits): unknown {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (source.trim() === '') return emptyParams()
  let value: unknown
  try {
    // V8 parses iteratively, so a deeply nested body cannot overflow the stack here.
    value = JSON.parse(source)
  } catch (error) {
    throw badRequest('Malformed JSON body', { cause: error })
  }
  return copyValue(value, 1, { keys: 0, limits })
}

interface Budget {
  keys: number
  readonly limits: JsonLimits
}

// Recursion is bounded by `limits.depth`: we throw before descending further.
function copyValue(value: unknown, depth: number, budget: Budget): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (depth > budget.limits.depth) {
    throw payloadTooLarge(`JSON body nested deeper than ${budget.limits.depth} levels`)
  }
  if (Array.isArray(value)) return value.map((item) => copyValue(item, depth + 1, budget))
  const source = value as Record<string, unknown>
  const copy = emptyParams()
  for (const key of Object.keys(source)) {
    if (++budget.keys > budget.limits.keys) {
      throw payloadTooLarge(`JSON body has more than ${budget.limits.keys} keys`)
    }
    if (!FORBIDDEN_KEYS.has(key)) copy[key] = copyValue(source[key], depth + 1, budget)
  }
  return copy
}
