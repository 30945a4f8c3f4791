/**
 * Normalises what the registrar's calls are given: where group()'s callback is among its
 * positional arguments, a group prefix joined to a path, and middleware as a list.
 */
import type { MiddlewareRef } from '../shared/route-record.js'

// group(prefix, domain, middleware, namePrefix, callback): the middleware's position.
const MIDDLEWARE_PLACE = 2

/**
 * Where group()'s callback is: the first function, except that a function in the middleware
 * place with another function after it is the group's middleware (the spec's middleware
 * "array/closure"): `group('/api', null, auth, 'api.', (r) => ...)`.
 */
export function callbackIndex(args: readonly unknown[]): number {
  const first = args.findIndex((a) => typeof a === 'function')
  if (first !== MIDDLEWARE_PLACE) return first
  const next = args.findIndex((a, i) => i > first && typeof a === 'function')
  return next === -1 ? first : next
}

/**
 * Joins a group prefix and a path: `('/api/', '/users')` → `/api/users`, `('/api', '/')` → `/api`.
 */
export function joinPaths(prefix: string, path: string): string {
  const head = prefix.replace(/\/+$/, '')
  if (path === '' || path === '/') return head === '' ? '/' : head
  const tail = path.startsWith('/') ? path : `/${path}`
  return head + tail
}

export function toList(
  middleware: MiddlewareRef | readonly MiddlewareRef[] | null | undefined,
): MiddlewareRef[] {
  if (middleware === undefined || middleware === null) return []
  return Array.isArray(middleware)
    ? [...(middleware as MiddlewareRef[])]
    : [middleware as MiddlewareRef]
}
