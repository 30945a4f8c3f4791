/**
 * A configured value as an error message shows it: strings quoted, numbers and booleans as they
 * are, lists entry by entry, and objects, functions and promises by kind (never their contents).
 * @example
 * shownValue(['https://a.example', 7]) // '["https://a.example", 7]'
 */
export function shownValue(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return `[${value.map(shownValue).join(', ')}]`
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return 'a function'
  if (value instanceof Promise) return 'a promise'
  return typeof value === 'object' ? 'an object' : String(value)
}
