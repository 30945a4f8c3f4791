/**
 * Reads the option arguments of route and group registrations, in the forms the specification's
 * registration interface allows, and refuses every other form with a clear error: an argument fw
 * does not understand is never dropped silently, nor left to fail later as a TypeError.
 */
import type { FwRequest } from '../runtime/request/request.js'
import type { FwResponse } from '../runtime/response.js'
import type { Next } from '../runtime/types.js'
import type { ErrorCode } from '../shared/errors.js'
import type { MiddlewareRef } from '../shared/route-record.js'

/**
 * A middleware as a routes file names it: an alias string (`'auth'`, `'throttle:5,60'`) or a
 * function of the request and `next`, so that an inline `(req, next) => next(req)` is typed
 * without annotations (a bare function type left both parameters `never` under strict). What it
 * returns is checked when it runs (anything but a response is the boundary's 500, naming it).
 */
export type MiddlewareInput =
  string | ((request: FwRequest, next: Next) => FwResponse | Promise<FwResponse>)

/**
 * What `r.alias(name, …)` names: another alias string, or a middleware function that also gets
 * the use's parameters after `next` (`'tenant:acme'` → `(req, next, 'acme')`), as Laravel's
 * `handle($request, $next, ...$params)`. It answers a response, as any middleware does (anything
 * else is the boundary's 500, naming it).
 * @example
 * r.alias('tenant', (req, next, id) => next(req.withAttribute('tenant', id)))
 */
export type AliasTarget =
  | string
  | ((request: FwRequest, next: Next, ...params: string[]) => FwResponse | Promise<FwResponse>)

/** Options accepted as the third argument of a verb method. */
export interface RouteOptions {
  name?: string | null | undefined
  middleware?: MiddlewareInput | readonly MiddlewareInput[] | null | undefined
}

/** Options of a group; every field composes with the enclosing groups. */
export interface GroupOptions {
  /** Prepended to every path inside, e.g. `/api/v1`. */
  prefix?: string | null | undefined
  /** A domain pattern such as `{account}.example.com`; its parameters reach the handler. */
  domain?: string | null | undefined
  /** Applied to every route inside, before the routes' own middleware. */
  middleware?: MiddlewareInput | readonly MiddlewareInput[] | null | undefined
  /** Prepended to every route name inside, e.g. `v1.`. */
  name?: string | null | undefined
}

/** Throws the FwError of a malformed registration (the registrar adds the call's location). */
export type Fail = (code: ErrorCode, message: string, hint: string) => never

const ROUTE_KEYS = ['name', 'middleware']
const GROUP_KEYS = ['prefix', 'domain', 'middleware', 'name']
const ROUTE_HINT =
  'The third argument is a name ("users.show") or { name, middleware }; add middleware with { middleware: [...] } or .withMiddleware([...]).'
const GROUP_HINT =
  "Use group({ prefix, domain, middleware, name }, callback) or group(prefix, domain, middleware, namePrefix, callback), e.g. group('/api', null, ['auth'], 'api.', (r) => { ... })."

/**
 * The third argument of a verb method: a name, an options object, or null/undefined (an empty
 * list too, PHP's `[]`). A non-empty list is refused: the spec takes middleware only from the
 * options' `middleware` key or withMiddleware(), so `['auth']` there would be dropped.
 * @example
 * routeOptions('GET /a', { name: 'a', middleware: ['auth'] }, fail) // the same object
 */
export function routeOptions(label: string, value: unknown, fail: Fail): RouteOptions {
  if (value === null || value === undefined) return {}
  if (typeof value === 'string') return { name: value }
  if (Array.isArray(value)) {
    if (value.length === 0) return {}
    fail(
      'FW_MIDDLEWARE_INVALID',
      `${label}: the third argument is a list (${preview(value)}); it takes a name or an options object`,
      ROUTE_HINT,
    )
  }
  if (!isPlainObject(value)) {
    fail(
      'FW_NAME_INVALID',
      `${label}: the third argument must be a route name or an options object, got ${preview(value)}`,
      ROUTE_HINT,
    )
  }
  checkKeys(`${label}: the options`, value, ROUTE_KEYS, fail, ROUTE_HINT)
  checkName(`${label}: the name`, value.name, fail, ROUTE_HINT)
  checkMiddleware(`${label}: the middleware`, value.middleware, fail, ROUTE_HINT)
  return value as RouteOptions
}

/**
 * The arguments of group() before its callback: one options object, or the positional
 * (prefix, domain, middleware, namePrefix), each optional and nullable.
 * @example
 * groupOptions(['/api', null, ['auth'], 'api.'], fail) // { prefix: '/api', ... }
 */
export function groupOptions(args: readonly unknown[], fail: Fail): GroupOptions {
  const [first, ...rest] = args
  if (isPlainObject(first)) {
    if (rest.some((a) => a !== undefined)) {
      fail(
        'FW_PATTERN_INVALID',
        `group(): after an options object only the callback may follow, got ${preview(rest.find((a) => a !== undefined))}`,
        GROUP_HINT,
      )
    }
    checkKeys('group(): the options', first, GROUP_KEYS, fail, GROUP_HINT)
    return checkGroup(first.prefix, first.domain, first.middleware, first.name, fail)
  }
  if (Array.isArray(first)) {
    fail(
      'FW_PATTERN_INVALID',
      `group(): the first argument is a list (${preview(first)}); it takes a prefix string or an options object`,
      GROUP_HINT,
    )
  }
  const [prefix, domain, middleware, name] = args
  return checkGroup(prefix, domain, middleware, name, fail)
}

function checkGroup(
  prefix: unknown,
  domain: unknown,
  middleware: unknown,
  name: unknown,
  fail: Fail,
): GroupOptions {
  for (const [what, value] of [
    ['prefix', prefix],
    ['domain', domain],
  ] as const) {
    if (value !== null && value !== undefined && typeof value !== 'string') {
      fail(
        'FW_PATTERN_INVALID',
        `group(): the ${what} must be a string, got ${preview(value)}`,
        GROUP_HINT,
      )
    }
  }
  checkMiddleware('group(): the middleware', middleware, fail, GROUP_HINT)
  checkName('group(): the name prefix', name, fail, GROUP_HINT)
  return {
    prefix: (prefix as string | null | undefined) ?? null,
    domain: (domain as string | null | undefined) ?? null,
    middleware: (middleware as MiddlewareInput | MiddlewareInput[] | null | undefined) ?? [],
    name: (name as string | null | undefined) ?? null,
  }
}

function checkKeys(
  what: string,
  value: Record<string, unknown>,
  allowed: readonly string[],
  fail: Fail,
  hint: string,
): void {
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key))
  if (unknown.length === 0) return
  fail(
    'FW_PATTERN_INVALID',
    `${what} have unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${allowed.join(', ')})`,
    hint,
  )
}

function checkName(what: string, value: unknown, fail: Fail, hint: string): void {
  if (value === null || value === undefined || typeof value === 'string') return
  fail('FW_NAME_INVALID', `${what} must be a string, got ${preview(value)}`, hint)
}

/**
 * A middleware list, or one alias or function. An entry that is neither (`undefined`: a hole, or
 * a middleware import that is missing) is refused here, at the call that gave it and naming it;
 * the compiler checks the aliases themselves.
 * @example
 * checkMiddleware('group(): the middleware', ['auth', undefined], fail, hint) // entry 2 is undefined
 */
export function checkMiddleware(what: string, value: unknown, fail: Fail, hint: string): void {
  if (value === null || value === undefined) return
  const list = Array.isArray(value) ? (value as unknown[]) : [value]
  const at = list.findIndex((m) => typeof m !== 'string' && typeof m !== 'function')
  if (at < 0) return
  fail(
    'FW_MIDDLEWARE_INVALID',
    `${what} must be a list of aliases or functions, got ${Array.isArray(value) ? `${preview(list[at])} at entry ${at + 1}` : preview(value)}`,
    hint,
  )
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === null || proto === Object.prototype
}

/** A short rendering of a user's value for an error message. */
export function preview(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'symbol' || typeof value === 'bigint') return String(value)
  try {
    const text = JSON.stringify(value)
    if (text !== undefined) return text.length > 60 ? `${text.slice(0, 57)}...` : text
  } catch {
    // A cycle or a throwing toJSON: fall back to the type.
  }
  return typeof value
}
