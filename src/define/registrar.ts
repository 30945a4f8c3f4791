/**
 * The API users write in `routes.ts`. Registering only records what was said (RouteRecord); it
 * parses no pattern, so the kernel can re-run a routes file at start-up to collect handlers cheaply.
 */
import type { FwRequest } from '../runtime/request/request.js'
import type { ErrorCode, SourceLocation } from '../shared/errors.js'
import { FwError } from '../shared/errors.js'
import type { HttpMethod } from '../shared/methods.js'
import type { HandlerRef, MiddlewareRef, RouteRecord } from '../shared/route-record.js'
import { callbackIndex, joinPaths, toList } from './arguments.js'
import { assertSynchronous } from './assert-synchronous.js'
import { captureLocation } from './location.js'
import {
  groupOptions,
  preview,
  routeOptions,
  type Fail,
  type GroupOptions,
  type AliasTarget,
  type MiddlewareInput,
  type RouteOptions,
} from './options.js'
import { Route, type AssertOpen } from './route.js'

export type { AliasTarget, RouteOptions, GroupOptions, MiddlewareInput } from './options.js'
export { assertSynchronous } from './assert-synchronous.js'
export { joinPaths } from './arguments.js'
export { Route } from './route.js'

/**
 * A handler as a routes file gives it: a function of the request, then the route parameters in
 * pattern order, a `[Class, 'method']` pair, or a `'Class@method'` string. The request is typed
 * for an inline `(req) => ...`; the parameters are each handler's own to declare
 * (`(req, id: number) => ...`): they are not inferred from the pattern. The verbs infer `Params`
 * from the handler, so a parameter left unannotated is `unknown` there, never a silent `any`
 * (`(req, id) => id.toFixed()` is a compile error: annotate `id: number`).
 * @example
 * const show: Handler<[id: number]> = (req, id) => ({ id })
 */
export type Handler<Params extends unknown[] = never[]> =
  | ((request: FwRequest, ...params: Params) => unknown)
  | readonly [abstract new (...args: never[]) => unknown, string]
  | string

/**
 * What a routes function or a group callback returning `R` is typed as: `R` itself, unless it is
 * a promise. Routes registered after an `await` would be missing from the table, so an async
 * callback is refused here as the build refuses it (FW_ROUTES_ASYNC).
 * @example
 * defineRoutes(async (r) => {}) // Type 'Promise<void>' is not assignable to type '"FW_ROUTES_ASYNC: …"'
 */
export type SynchronousRegistration<R> =
  R extends PromiseLike<unknown>
    ? 'FW_ROUTES_ASYNC: register routes synchronously, not in an async function'
    : R

/** A group's callback: registers the group's routes on `r`, synchronously. */
export type GroupCallback<R = void> = (r: Registrar) => SynchronousRegistration<R>

/** A verb's third argument: a name, `{ name, middleware }`, or none (`null`, or PHP's `[]`). */
export type NameOrOptions = string | RouteOptions | null | readonly []

type MiddlewareList = MiddlewareInput | readonly MiddlewareInput[] | null

// A custom alias name: a word, so that `name:params` in a route's middleware splits as it does for
// the built-ins.
const ALIAS_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/

interface Scope {
  id: number
  prefix: string
  domain: string | null
  middleware: MiddlewareRef[]
  /** The scope id that added each middleware entry (a throttle counts per group). */
  middlewareScopes: number[]
  namePrefix: string
  chain: number[]
}

/**
 * Collects route registrations. A routes file's default export receives one.
 * @example
 * export default (r: Registrar) => {
 *   r.get('/', home, 'home')
 *   r.group({ prefix: '/api/v1', name: 'v1.' }, (r) => r.get('/users/{id:int}', show, 'users.show'))
 * }
 */
export class Registrar {
  readonly routes: RouteRecord[] = []
  /** Custom middleware aliases registered with `alias()`, by name. */
  readonly aliases = new Map<string, MiddlewareRef>()
  readonly #captureLocations: boolean
  #scope: Scope = {
    id: 0,
    prefix: '',
    domain: null,
    middleware: [],
    middlewareScopes: [],
    namePrefix: '',
    chain: [0],
  }
  #nextScopeId = 1
  #sealed = false

  constructor(options: { captureLocations?: boolean } = {}) {
    this.#captureLocations = options.captureLocations ?? false
  }

  /**
   * Ends registration: the routes function has returned and its routes were collected. A call
   * made later (from a timer, a `.then` or an event) would not be in the route table, so it
   * throws FW_ROUTES_LATE instead of being lost silently.
   */
  seal(): void {
    this.#sealed = true
  }

  get<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('GET', path, handler, nameOrOptions)
  }
  post<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('POST', path, handler, nameOrOptions)
  }
  put<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('PUT', path, handler, nameOrOptions)
  }
  patch<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('PATCH', path, handler, nameOrOptions)
  }
  delete<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('DELETE', path, handler, nameOrOptions)
  }
  options<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('OPTIONS', path, handler, nameOrOptions)
  }
  head<Params extends unknown[]>(
    path: string,
    handler: Handler<Params>,
    nameOrOptions?: NameOrOptions,
  ): Route {
    return this.#add('HEAD', path, handler, nameOrOptions)
  }

  /**
   * Registers routes that share a prefix, domain, middleware or name prefix. Either
   * `group(options, callback)` or the positional
   * `group(prefix, domain, middleware, namePrefix, callback)`; any argument may be the callback.
   * (One overload per position of the callback: a union of the callback and a middleware
   * function would leave `(r) => ...` untyped, an implicit `any` under `strict`.)
   */
  group<R>(options: GroupOptions | string | null, callback: GroupCallback<R>): void
  group<R>(prefix: string | null, domain: string | null, callback: GroupCallback<R>): void
  group<R>(
    prefix: string | null,
    domain: string | null,
    middleware: MiddlewareList,
    callback: GroupCallback<R>,
  ): void
  group<R>(
    prefix: string | null,
    domain: string | null,
    middleware: MiddlewareList,
    namePrefix: string | null,
    callback: GroupCallback<R>,
  ): void
  group(...args: unknown[]): void {
    this.#assertOpen('group')
    const index = callbackIndex(args)
    if (index === -1) {
      throw this.#error(
        'FW_PATTERN_INVALID',
        'group() needs a callback that registers its routes',
        'Pass (r) => { ... } as the last argument.',
      )
    }
    if (args.slice(index + 1).some((a) => a !== undefined)) {
      throw this.#error(
        'FW_PATTERN_INVALID',
        `group(): ${args.length - index - 1} argument(s) after the callback`,
        'The callback comes last: group(prefix, domain, middleware, namePrefix, callback).',
      )
    }
    const callback = args[index] as (r: Registrar) => unknown
    const options = groupOptions(args.slice(0, index), this.#fail())
    const outer = this.#scope
    const id = this.#nextScopeId++
    const added = toList(options.middleware)
    this.#scope = {
      id,
      prefix: joinPaths(outer.prefix, options.prefix ?? ''),
      domain: options.domain ?? outer.domain,
      middleware: [...outer.middleware, ...added],
      middlewareScopes: [...outer.middlewareScopes, ...added.map(() => id)],
      namePrefix: outer.namePrefix + (options.name ?? ''),
      chain: [...outer.chain, id],
    }
    try {
      const returned = callback(this) as unknown
      assertSynchronous(returned, 'A group callback', () =>
        this.#captureLocations ? captureLocation()() : undefined,
      )
    } finally {
      this.#scope = outer
    }
  }

  /**
   * Registers a custom middleware alias usable by name in this routes file. The name is a word
   * without `:` (what follows a `:` in a route's alias string is its parameters); the middleware
   * is a function (or a string the kernel resolves): a number or an object would pass the build
   * and then be ignored, or fail, when the server starts.
   */
  alias(name: string, middleware: AliasTarget): this {
    this.#assertOpen('alias', name)
    if (typeof name !== 'string' || !ALIAS_NAME.test(name)) {
      throw this.#error(
        'FW_MIDDLEWARE_INVALID',
        `alias(): ${typeof name === 'string' ? JSON.stringify(name) : typeof name} is not a middleware alias name`,
        'Name aliases with letters, digits, "_", "-" and ".", e.g. r.alias("tenant", fn); no ":" or spaces.',
      )
    }
    if (typeof middleware !== 'function' && typeof middleware !== 'string') {
      throw this.#error(
        'FW_MIDDLEWARE_INVALID',
        `alias("${name}"): the middleware must be a function, not ${middleware === null ? 'null' : typeof middleware}`,
        'Pass the middleware function itself: r.alias("tenant", (req, next) => next(req)).',
      )
    }
    this.aliases.set(name, middleware)
    return this
  }

  #add(
    method: HttpMethod,
    path: string,
    handler: HandlerRef,
    nameOrOptions: NameOrOptions | undefined,
  ): Route {
    this.#assertOpen(method.toLowerCase(), path)
    const where = this.#captureLocations ? captureLocation() : null
    if (typeof path !== 'string') {
      throw this.#error(
        'FW_PATTERN_INVALID',
        `${method} route path must be a string, got ${preview(path)}`,
        'Write the path as "/users/{id}".',
        where?.(),
      )
    }
    const scope = this.#scope
    const full = joinPaths(scope.prefix, path)
    const options = routeOptions(`${method} ${full}`, nameOrOptions, this.#fail(where))
    const own = toList(options.middleware)
    const record: RouteRecord = {
      id: this.routes.length,
      method,
      path: full,
      host: scope.domain,
      name: options.name == null ? null : scope.namePrefix + options.name,
      middleware: [...scope.middleware, ...own],
      middlewareScopes: [...scope.middlewareScopes, ...own.map(() => -1)],
      handler,
      scopes: scope.chain,
      location: undefined,
    }
    // Resolved on first read: only routes named in an error message pay for a line number.
    if (where) Object.defineProperty(record, 'location', { get: where, enumerable: true })
    this.routes.push(record)
    return new Route(record, scope.namePrefix, this.#assertOpen)
  }

  readonly #assertOpen: AssertOpen = (call, argument) => {
    if (!this.#sealed) return
    const shown = typeof argument === 'string' ? JSON.stringify(argument) : ''
    throw this.#error(
      'FW_ROUTES_LATE',
      `${call}(${shown}) was called after the routes function returned: it is not in the route table`,
      'Register every route while the routes function runs, not in a timer, a .then or an event handler; load what you need with top-level await in the routes module.',
    )
  }

  /** A Fail that throws with the location of the registration call. */
  #fail(where?: (() => SourceLocation | undefined) | null): Fail {
    return (code, message, hint) => {
      throw this.#error(code, message, hint, where?.())
    }
  }

  #error(code: ErrorCode, message: string, hint: string, location?: SourceLocation): FwError {
    return new FwError(code, message, {
      hint,
      location: location ?? (this.#captureLocations ? captureLocation()() : undefined),
    })
  }
}

/**
 * Types a routes file's default export; returns its argument unchanged.
 * @example
 * export default defineRoutes((r) => { r.get('/', () => 'home', 'home') })
 */
export function defineRoutes<R>(
  register: (r: Registrar) => SynchronousRegistration<R>,
): (r: Registrar) => void {
  return register
}

/** Runs a routes function against a fresh registrar and returns what it registered. */
export function collectRoutes(
  register: (r: Registrar) => void,
  options: { captureLocations?: boolean } = {},
): Registrar {
  const registrar = new Registrar(options)
  assertSynchronous(register(registrar) as unknown, 'The routes function')
  registrar.seal()
  return registrar
}
