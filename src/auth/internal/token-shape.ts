/**
 * Checks on a compact JWS that run before any cryptography, and the claim helpers that run after.
 * jose alone verifies several spellings of one token (Node's base64url decoder ignores the unused
 * low bits of the last character and tolerates '='), so only canonical segments get through here.
 */

/** Larger tokens are rejected unread. Our tokens are ~300 bytes; 8 KiB leaves room for claims. */
export const MAX_TOKEN_LENGTH = 8192

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const DECIMAL = /^[0-9]{1,32}$/

/** Three unpadded, canonical base64url segments of a sane length. */
export function hasCanonicalShape(token: string): boolean {
  if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) return false
  return token.split('.').every(isCanonicalBase64url)
}

function isCanonicalBase64url(segment: string): boolean {
  return Buffer.from(segment, 'base64url').toString('base64url') === segment
}

/** The decoded JOSE header, or null when it is not a JSON object. */
export function readHeader(token: string): Record<string, unknown> | null {
  try {
    const header: unknown = JSON.parse(
      Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'),
    )
    return isPlainObject(header) ? header : null
  } catch {
    return null
  }
}

/** A positive safe integer from a JSON number or a string of plain decimal digits, else null. */
export function parseSubject(sub: unknown): number | null {
  if (typeof sub === 'number') return Number.isSafeInteger(sub) && sub > 0 ? sub : null
  if (typeof sub !== 'string' || !DECIMAL.test(sub)) return null
  const value = Number(sub) // leading zeros allowed: "007" is user 7
  return Number.isSafeInteger(value) && value > 0 ? value : null
}

/** A deep copy in which every object has a null prototype, so a signed `__proto__` is inert data. */
export function toNullPrototype(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toNullPrototype)
  if (!isPlainObject(value)) return value
  const copy = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: toNullPrototype(value[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return copy
}

/** The own string entries of a `roles` claim; anything else counts as no roles. */
export function readRoles(payload: Record<string, unknown>): string[] {
  const roles = Object.hasOwn(payload, 'roles') ? payload.roles : undefined
  return Array.isArray(roles)
    ? roles.filter((role): role is string => typeof role === 'string')
    : []
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
