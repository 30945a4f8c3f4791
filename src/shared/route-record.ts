/**
 * What registering a route records, before any pattern is parsed. Build time (the compiler) and
 * run time (the kernel, which needs the handlers) both produce these from the same routes file;
 * the fingerprint of the list tells whether a compiled cache belongs to it.
 */
import { createHash } from 'node:crypto'
import type { SourceLocation } from './errors.js'
import type { HttpMethod } from './methods.js'

/** A middleware: an alias string such as `'auth'` or `'throttle:5,60'`, or a function. */
export type MiddlewareRef = string | ((...args: never[]) => unknown)

/** A handler: a function, a `[Class, 'method']` pair, or a `'Class@method'` / module string. */
export type HandlerRef =
  | ((...args: never[]) => unknown)
  | readonly [abstract new (...args: never[]) => unknown, string]
  | string

export interface RouteRecord {
  /** Registration index, 0-based; also the route id in the compiled cache. */
  id: number
  method: HttpMethod
  /** The full path pattern, group prefixes joined. */
  path: string
  /** The domain pattern, or null for routes that answer on any host. */
  host: string | null
  /** The full name, group name prefixes prepended, or null. */
  name: string | null
  /** Every middleware that applies, outermost group first, the route's own last. */
  middleware: MiddlewareRef[]
  /** For each middleware entry, the group scope that added it, or -1 for the route's own. */
  middlewareScopes: number[]
  handler: HandlerRef
  /** The group scopes the route was registered in, outermost (0, the file itself) first. */
  scopes: number[]
  location: SourceLocation | undefined
}

/** How a middleware appears in route tables and fingerprints. */
export function describeMiddleware(ref: MiddlewareRef): string {
  return typeof ref === 'string' ? ref : `fn:${ref.name || 'anonymous'}`
}

/** How a handler appears in route tables (`routes:list`). */
export function describeHandler(ref: HandlerRef): string {
  if (typeof ref === 'string') return ref
  if (typeof ref === 'function') return ref.name ? `${ref.name}()` : 'closure'
  return `${ref[0].name || 'anonymous'}@${ref[1]}`
}

/**
 * A route as tables show it (`routes:list`, the cache's __routes.json): middleware and handler
 * described; `host` and `name` null when absent.
 */
export interface RouteRow {
  method: string
  host: string | null
  path: string
  name: string | null
  middleware: string[]
  handler: string
}

export function describeRoute(r: RouteRecord): RouteRow {
  return {
    method: r.method,
    host: r.host,
    path: r.path,
    name: r.name,
    middleware: r.middleware.map(describeMiddleware),
    handler: describeHandler(r.handler),
  }
}

/**
 * A stable hash of what the compiled cache holds: methods, hosts, paths, names, middleware and
 * handlers as `routes:list` describes them, in registration order. Dispatch looks handlers up by
 * route id, but the cache's route table (`routes`, __routes.json) shows them: a handler changed
 * since the build makes the cache stale too, rather than leaving that table out of date.
 */
export function fingerprintRoutes(records: readonly RouteRecord[]): string {
  const hash = createHash('sha256')
  for (const r of records) {
    hash.update(
      JSON.stringify([
        r.method,
        r.host,
        r.path,
        r.name,
        r.middleware.map(describeMiddleware),
        describeHandler(r.handler),
      ]),
    )
    hash.update('\n')
  }
  return hash.digest('hex')
}
