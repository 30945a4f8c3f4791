/**
 * The kernel: boots from the compiled route cache and the routes function, resolves every route's
 * middleware and handler once, and handles requests through pre-global → group → route →
 * post-global middleware around the handler, with the error boundary at every step.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Registrar } from '../define/registrar.js'
import type { MiddlewareRef, RouteRecord } from '../shared/route-record.js'
import { Container } from './container.js'
import { renderError, settleWithin, toHttpError, withErrorHeaders } from './error-boundary.js'
import { resolveHandler, toResponse, type Invoke, type Invoker } from './handlers.js'
import { FwError } from '../shared/errors.js'
import { HTTP_METHODS } from '../shared/methods.js'
import { BUILTIN_ALIASES, checkAlias, walkAlias } from '../shared/middleware-aliases.js'
import { badRequest, methodNotAllowed, notFound } from './http-error.js'
import { loadRouter, type CompiledRouter } from './load-router.js'
import { createLogger, guardLogger } from './logger.js'
import { builtinFactories } from './middleware/index.js'
import { withContext } from './middleware/context.js'
import { moduleFactories } from './middleware/modules.js'
import {
  compose,
  entryOf,
  guarded,
  notAResponse,
  type Entry,
  type Failed,
  type Finish,
  type Render,
  type Rescue,
  type Step,
} from './pipeline.js'
import { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'
import { UrlSigner } from './signed-url.js'
import type {
  KernelServices,
  Logger,
  Middleware,
  MiddlewareFactory,
  Next,
  RequestOptions,
  ViewEngine,
} from './types.js'
import { TemplateViews } from './views.js'
import { compileTrust } from './request/options.js'
import { setCurrentKernel } from './app.js'
import { checkMatcher, runProviderHook, toProvider } from './kernel-providers.js'
import { signingKeys, type Env, type KernelOptions } from './kernel-options.js'
import { isProduction } from '../shared/app-env.js'

export type { ServiceProviderClass } from './kernel-providers.js'
export type { Env, KernelOptions, MatcherKind, ServiceProvider } from './kernel-options.js'

// What a route without placeholders passes its handler (shared: built-in invocation never keeps it).
const NO_PARAMS: readonly unknown[] = Object.freeze([])

// The request as the running layer (middleware or handler) received it: each one runs in a scope
// of its own, so after `await next(request)` a middleware sees its own request again.
const scope = new AsyncLocalStorage<FwRequest>()

/**
 * The request being handled, as the current middleware or handler received it, when
 * requestScopeEnabled is on; undefined outside a request.
 * @example
 * const log = (msg: string) => console.log(currentRequest()?.getAttribute('request_id'), msg)
 */
export function currentRequest(): FwRequest | undefined {
  return scope.getStore()
}

/** container.get('request') with the request scope on: the request being handled. */
function requestInScope(): FwRequest {
  const request = scope.getStore()
  if (request === undefined)
    throw new Error('No request is being handled: container.get("request") works only during one')
  return request
}

/**
 * @example
 * const kernel = await Kernel.boot({ routeCache: '.fw/cache', register: routes })
 * attachKernel(http.createServer(), () => kernel).listen(3000)
 */
export class Kernel implements KernelServices {
  readonly log: Logger
  readonly env: Env
  readonly container: Container
  readonly router: CompiledRouter
  #signer: UrlSigner | null = null
  #modules: Record<string, MiddlewareFactory> = {}
  /** Whether any route has a domain: only then does matching need the Host. */
  readonly #hosts: boolean
  /** What `OPTIONS *` (a question about the whole server) answers in `Allow`. */
  readonly #serverAllow: string
  /** One instance per controller class, shared by all its routes. */
  readonly #instances = new Map<unknown, Record<string, unknown>>()
  readonly requestOptions: RequestOptions
  /** See KernelOptions.sendTimeoutMs; the node adapter applies it. */
  readonly sendTimeoutMs: number
  readonly #options: KernelOptions
  readonly #debug: boolean
  readonly #views: ViewEngine
  #routes: Step[] = []
  #entry: Entry = () => {
    throw new Error('The kernel is still booting: it answers requests once Kernel.boot() resolves')
  }

  private constructor(options: KernelOptions, router: CompiledRouter) {
    this.#options = options
    this.env = options.env ?? (isProduction() ? 'production' : 'development')
    this.#debug = this.env !== 'production' && (options.debug ?? false)
    this.log = options.log === undefined ? createLogger(this.env) : guardLogger(options.log)
    this.container = options.container ?? new Container()
    // The spec's request scope: the request is bound in the container for its lifecycle (an
    // app's own 'request' binding is left alone).
    if (options.requestScopeEnabled === true && !this.container.has('request'))
      this.container.bind('request', requestInScope)
    this.router = router
    this.#hosts = router.routes.some((route) => route.host !== null)
    const used = new Set(router.routes.map((route) => route.method))
    const allowed = (m: string): boolean =>
      used.has(m) || m === 'OPTIONS' || (m === 'HEAD' && used.has('GET'))
    this.#serverAllow = HTTP_METHODS.filter(allowed).join(', ')
    // An edited view shows at once in development (fw serve --watch rebuilds on route changes).
    this.#views = options.views ?? new TemplateViews({ cache: this.env === 'production' })
    this.requestOptions = {
      trustProxy: compileTrust(process.env.TRUSTED_PROXIES),
      ...options.request,
    }
    this.sendTimeoutMs = options.sendTimeoutMs ?? SEND_TIMEOUT_MS
  }

  /** Loads the cache, runs the service providers and resolves every route's pipeline. */
  static async boot(options: KernelOptions): Promise<Kernel> {
    checkMatcher(options.matcher)
    checkRendererTimeout(options.errorRendererTimeoutMs)
    checkSendTimeout(options.sendTimeoutMs)
    const router = await loadRouter(options.routeCache, { register: options.register })
    const kernel = new Kernel(options, router)
    const providers = (options.serviceProviders ?? []).map(toProvider)
    // One after another, in order: every register before any boot (a provider's failure names it).
    for (const [i, provider] of providers.entries())
      await runProviderHook(provider, 'register', i, kernel)
    for (const [i, provider] of providers.entries())
      await runProviderHook(provider, 'boot', i, kernel)
    const registrar = router.registrar!
    // Tagged middleware (by register() or boot(), as a package adds its middleware in Laravel)
    // is appended after the explicit lists, and its module aliases (throttle, auth, role) are
    // loaded like those of the lists.
    const pre = [...(options.preGlobal ?? []), ...kernel.#tagged(options.preGlobalTags)]
    const post = [...(options.postGlobal ?? []), ...kernel.#tagged(options.postGlobalTags)]
    // An alias registered with a string (r.alias('limit', 'throttle:5,60')) names a module too.
    const targets = [...registrar.aliases.values()].filter((ref) => typeof ref === 'string')
    const refs = [...registrar.routes.flatMap((r) => r.middleware), ...pre, ...post, ...targets]
    kernel.#modules = await moduleFactories(refs, { ...options.middleware })
    kernel.#resolvePipelines(registrar, pre, post)
    if (!options.invoker) warnUnbound(registrar.routes, kernel)
    setCurrentKernel(kernel)
    return kernel
  }

  /** Signs and verifies URLs; built on first use (so apps without signed URLs need no key). */
  get signer(): UrlSigner {
    return (this.#signer ??= new UrlSigner({
      keys: signingKeys(this.#options, this),
      urlFor: this.router.urlFor,
      hasDomain: domainRouteNames(this.router.routes),
    }))
  }

  urlFor(
    name: string,
    params?: Record<string, unknown>,
    query?: Record<string, unknown>,
    absolute?: boolean | string,
  ): string {
    return this.router.urlFor(name, params, query, absolute)
  }

  resolve<T = unknown>(key: string): T | undefined {
    return this.container.has(key) ? this.container.get<T>(key) : undefined
  }

  /** Handles one request; never rejects (errors become responses). */
  handle(request: FwRequest): Promise<FwResponse> {
    const response = this.respond(request)
    return response instanceof Promise ? response : Promise.resolve(response)
  }

  /**
   * `handle()` for adapters: the response itself when every step answered synchronously (no
   * promise, no microtask), else a promise that never rejects.
   */
  respond(request: FwRequest): FwResponse | Promise<FwResponse> {
    return this.respondTo<undefined, FwResponse | Promise<FwResponse>>(
      request,
      undefined,
      itself,
      this.#answerFailure,
    ) as FwResponse | Promise<FwResponse>
  }

  // What the pipeline rejects with (only a bug in fw can make it) still becomes a response.
  readonly #answerFailure = (error: unknown, request: FwRequest): Promise<FwResponse> =>
    this.#rescue(error, request)

  /**
   * `respond()` in continuation form, for adapters: `finish(response, request, context)` gets
   * the response (synchronously when every step answered so), and its result is returned, or
   * promised. `failed` gets what the pipeline rejects with, which only a bug in fw can cause.
   * @example
   * kernel.respondTo(request, res, (response, request, res) => write(res, response), (error) => log(error))
   */
  respondTo<C, T>(
    request: FwRequest,
    context: C,
    finish: Finish<C, T>,
    failed: Failed<C, T>,
  ): T | Promise<T> {
    if (!this.#options.requestScopeEnabled) return this.#entry(request, context, finish, failed)
    return scope.run(request, this.#entry<C, T>, request, context, finish, failed)
  }

  /**
   * The error boundary's answer to `error` raised for `request` after the pipeline answered: for
   * adapters, when a streamed body fails before its first byte (a file that cannot be opened).
   * Never rejects; the error is logged as the boundary logs any other.
   */
  answerError(error: unknown, request: FwRequest): Promise<FwResponse> {
    return this.#rescue(error, request)
  }

  /** The middleware refs bound to container `tags`, in order. */
  #tagged(tags: string[] | undefined): MiddlewareRef[] {
    return (tags ?? []).flatMap((tag) => this.container.tagged<MiddlewareRef>(tag))
  }

  #resolvePipelines(
    registrar: Registrar,
    preRefs: MiddlewareRef[],
    postRefs: MiddlewareRef[],
  ): void {
    const resolve = this.#middlewareResolver(registrar)
    const pre = preRefs.map(resolve)
    const post = postRefs.map(resolve)
    const rescue = (error: unknown, request: FwRequest): Promise<FwResponse> =>
      this.#rescue(error, request)
    // A view a middleware answers is rendered as a handler's is (in the scope of the request
    // that middleware received); one that fails is rescued.
    const scoped = this.#options.requestScopeEnabled === true
    const render = (response: FwResponse, request: FwRequest): Promise<FwResponse> =>
      (scoped ? scope.run(request, () => this.#render(response)) : this.#render(response)).catch(
        (error: unknown) => rescue(error, request),
      )
    this.#routes = registrar.routes.map((record) => {
      const final = this.#handlerStep(record, rescue)
      const layers = [...record.middleware.map(resolve), ...post]
      return compose(layers, final, rescue, { finalRescues: true, render })
    })
    this.#entry = this.#routingEntry(pre, rescue, render)
  }

  /** What turns a middleware ref (alias, alias with parameters, or function) into its layer. */
  #middlewareResolver(registrar: Registrar): (ref: MiddlewareRef) => Middleware {
    const factories: Record<string, MiddlewareFactory> = {
      ...builtinFactories(this),
      ...this.#modules,
      ...this.#options.middleware,
    }
    const scoped = this.#options.requestScopeEnabled === true
    // With the request scope on, every layer runs in a scope of the request it received (only
    // then: the wrapper costs a call and a scope switch per layer).
    const own = this.#options.middleware ?? {}
    return (ref) => {
      checkBuiltinParams(ref, (name) => Object.hasOwn(own, name) || registrar.aliases.has(name))
      const layer = resolveMiddleware(ref, factories, registrar.aliases, this)
      return scoped ? inScope(layer) : layer
    }
  }

  /** A route's final step: loads the body if need be, runs the handler, makes its response. */
  #handlerStep(record: RouteRecord, rescue: Rescue): Step {
    const invoke = this.#invoker(record.handler)
    const scoped = this.#options.requestScopeEnabled === true
    // A route without placeholders passes no parameters: no Object.values() per request.
    const takesParams = record.path.includes('{') || (record.host?.includes('{') ?? false)
    // Synchronous unless the body is still to be read or the handler returns a promise.
    const answer = (request: FwRequest): FwResponse | Promise<FwResponse> => {
      const params = takesParams
        ? Object.values(request.getAttribute('route.params') as Record<string, unknown>)
        : NO_PARAMS
      const result = invoke(request, params)
      return result instanceof Promise
        ? result.then((value) => this.#finish(value, request))
        : this.#finish(result, request)
    }
    const scopedAnswer = scoped
      ? (request: FwRequest) => scope.run(request, answer, request)
      : answer
    // The final step rescues its own failures: a body that failed to load, a handler that threw.
    // Its answer always went through #finish, so it is a response: no check (`checked` false).
    const safeAnswer = guarded(scopedAnswer, rescue, true, 'The handler', false)
    return (request) =>
      request.isBodyLoaded()
        ? safeAnswer(request)
        : request.loadBody().then(
            () => safeAnswer(request),
            (error: unknown) => rescue(error, request),
          )
  }

  /** The entry: the global `pre` middleware around routing, the built-ins around them. */
  #routingEntry(pre: Middleware[], rescue: Rescue, render: Render): Entry {
    // Routing fails only by throwing (404, 405, 400); a route's pipeline never rejects, compose
    // guards it. So a try/catch is all the guard dispatch needs: no `.then` per request.
    const dispatch = (request: FwRequest): FwResponse | Promise<FwResponse> => {
      try {
        return this.#dispatch(request)
      } catch (error) {
        return rescue(error, request)
      }
    }
    const pipeline = compose(pre, dispatch, rescue, { finalRescues: true, render })
    // The built-ins (request context, production HTTPS redirect) wrap everything, outermost.
    return this.#options.builtins === false
      ? entryOf(pipeline)
      : withContext(pipeline, rescue, this.env === 'production')
  }

  #finish(result: unknown, request: FwRequest): FwResponse | Promise<FwResponse> {
    // A foreign thenable (a query builder such as Knex's or Drizzle's, a PrismaPromise) is
    // awaited, as a middleware's is: as JSON it was `{}` or a 500 (circular).
    if (!(result instanceof FwResponse) && isThenable(result))
      return Promise.resolve(result).then((value) => this.#finish(value, request))
    const response = toResponse(result)
    if (response.view) return this.#render(response)
    // A streamed body is closed after the response unless it was sent: a middleware may drop it.
    const body = response.body
    if (typeof body === 'object' && body !== null && !(body instanceof Uint8Array))
      request.holdBody(body)
    return response
  }

  #invoker(handler: Parameters<Invoker>[0]): Invoke {
    const invoker = this.#options.invoker
    // A custom invoker gets an array of its own, even for a route without parameters.
    if (invoker)
      return (request, params) => invoker(handler, request, params === NO_PARAMS ? [] : params)
    return resolveHandler(handler, this.container, this.#instances)
  }

  /** Routing: a hit runs the route's pipeline; misses become 404/405/400 or the automatic OPTIONS. */
  #dispatch(request: FwRequest): Promise<FwResponse> | FwResponse {
    const method = request.getMethod()
    const found = this.router.match(
      method,
      request.getPath(),
      this.#hosts ? request.getHost() : undefined,
    )
    if ('route' in found) {
      const routed = request.withAttributes({
        'route.name': found.route.name,
        'route.params': found.params,
      })
      return this.#routes[found.route.id]!(routed)
    }
    if (found.status === 405) {
      if (method === 'OPTIONS')
        return new FwResponse(204, { allow: [...found.allow, 'OPTIONS'].join(', ') })
      throw methodNotAllowed(found.allow)
    }
    // `OPTIONS *` asks about the server, not a resource (RFC 9110 §9.3.7): every method in use.
    if (method === 'OPTIONS' && request.getPath() === '*')
      return new FwResponse(204, { allow: this.#serverAllow })
    throw found.status === 400 ? badRequest('Malformed URL') : notFound()
  }

  async #rescue(thrown: unknown, request: FwRequest): Promise<FwResponse> {
    const context = {
      accept: request.getHeaderLine('accept'),
      path: request.getPath(),
      requestId: (request.getAttribute('request_id') as string | null | undefined) ?? undefined,
      debug: this.#debug,
      log: this.log,
    }
    const error = toHttpError(thrown, context)
    const renderer = this.#options.errorRenderer
    if (!renderer) return renderError(error, context)
    try {
      // With the request scope on, the renderer's currentRequest() is the request that failed
      // (with its request id): outside any layer (a routing miss) it was the request as it came.
      const answer = this.#options.requestScopeEnabled
        ? scope.run(request, renderer, error, context)
        : renderer(error, context)
      const rendered: unknown = await settleWithin(
        answer,
        this.#options.errorRendererTimeoutMs ?? RENDERER_TIMEOUT_MS,
      )
      // A view answer (an error page template) is rendered as a handler's is; one that fails to
      // render falls back to the default rendering, as any failure of the renderer does.
      // The headers the status needs (a 405's Allow, a 401's challenge) and ERROR_HEADERS are
      // added where the renderer left them out.
      if (rendered instanceof FwResponse)
        return withErrorHeaders(rendered.view ? await this.#render(rendered) : rendered, error)
      throw notAResponse(
        'The custom error renderer',
        rendered,
        'return an FwResponse, such as json(body, error.status) or view(name, data, error.status)',
      )
    } catch (failure) {
      this.log.error(
        { err: failure, path: context.path, request_id: context.requestId },
        'The custom error renderer failed',
      )
      return renderError(error, context)
    }
  }

  async #render(response: FwResponse): Promise<FwResponse> {
    const { name, data } = response.view!
    const html: unknown = await this.#views.render(name, data)
    // A custom engine that answers no text would send an empty 200 (undefined) or fail in Node.
    if (typeof html !== 'string' && !(html instanceof Uint8Array))
      throw new TypeError(
        `The view engine returned ${html === null ? 'null' : typeof html} for view "${name}", not a string`,
      )
    return new FwResponse(response.status, { ...response.headers }, html)
  }
}

/** Whether a route name belongs to a route with a domain (its signed URLs bind the host). */
function domainRouteNames(routes: CompiledRouter['routes']): (name: string) => boolean {
  const names = new Set(
    routes.flatMap((route) => (route.host !== null && route.name ? [route.name] : [])),
  )
  return (name) => names.has(name)
}

const itself = (response: FwResponse): FwResponse => response

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function'
}

// A custom error renderer's deadline: long enough for a template or a lookup, short of a
// client's patience; past it the default JSON error is answered.
const RENDERER_TIMEOUT_MS = 5000

function checkRendererTimeout(ms: number | undefined): void {
  if (ms === undefined || (Number.isFinite(ms) && ms > 0 && ms <= 2 ** 31 - 1)) return
  throw new RangeError(`errorRendererTimeoutMs must be a number of milliseconds above 0, not ${ms}`)
}

// How long a response waits on a client that takes none of its bytes (nginx's send_timeout).
const SEND_TIMEOUT_MS = 60_000

function checkSendTimeout(ms: number | undefined): void {
  if (ms === undefined || (Number.isInteger(ms) && ms >= 0 && ms <= 2 ** 31 - 1)) return
  throw new RangeError(
    `sendTimeoutMs must be a whole number of milliseconds, 0 (never) or more, not ${typeof ms === 'string' ? JSON.stringify(ms) : String(ms)}`,
  )
}

/**
 * Warns about each string handler naming nothing bound once the providers have booted: a typo
 * ('UserControler@show') would otherwise show only as a 500 at every request to the route.
 */
function warnUnbound(records: readonly RouteRecord[], kernel: Kernel): void {
  // Once per key, naming its first route and how many there are: a controller left unbound in a
  // large app logged a line for every one of its routes (1,000 lines for 5 keys in 10,000 routes).
  const unbound = new Map<string, { route: string; handler: string; routes: number }>()
  for (const { handler, name, method, path } of records) {
    if (typeof handler !== 'string') continue
    const key = handler.split('@')[0]!
    const seen = unbound.get(key)
    if (seen !== undefined) seen.routes++
    else if (!kernel.container.has(key))
      unbound.set(key, { route: name ?? `${method} ${path}`, handler, routes: 1 })
  }
  for (const [key, { route, handler, routes }] of unbound) {
    kernel.log.warn(
      routes === 1 ? { route, handler } : { route, handler, routes },
      routes === 1
        ? `Nothing is bound to "${key}" in the container: the route answers 500 until something is`
        : `Nothing is bound to "${key}" in the container: its ${routes} routes answer 500 until something is`,
    )
  }
}

/** `layer` run in a request scope of the request it receives (see currentRequest()). */
function inScope(layer: Middleware): Middleware {
  const scoped: Middleware = (request, next) => scope.run(request, layer, request, next)
  // The pipeline names a middleware that answers no response after its function name.
  Object.defineProperty(scoped, 'name', { value: layer.name })
  return scoped
}

/**
 * Checks the parameters of a built-in alias (`verifySignedUrl:x`, `throttle:0,60`) as the
 * compiler does for the routes file's: those in the global lists or tagged in the container reach
 * the kernel unchecked. An alias the app implements itself (`replaced`) has rules of its own.
 */
function checkBuiltinParams(ref: MiddlewareRef, replaced: (name: string) => boolean): void {
  if (typeof ref !== 'string') return
  const name = ref.split(':')[0]!
  if (!Object.hasOwn(BUILTIN_ALIASES, name) || replaced(name)) return
  const problem = checkAlias(ref, NO_ALIASES)
  if (problem !== null)
    throw new FwError('FW_MIDDLEWARE_INVALID', `Middleware ${problem}`, {
      hint: 'Fix the alias in the kernel options or the container, e.g. throttle:5,60.',
    })
}

const NO_ALIASES: ReadonlySet<string> = new Set()

/**
 * The layer of `ref`: a function as it is; an alias registered with r.alias as followAlias
 * resolves it (a function, or another alias string); else a built-in or module factory given the
 * parameters.
 */
function resolveMiddleware(
  ref: MiddlewareRef,
  factories: Record<string, MiddlewareFactory>,
  aliases: Map<string, MiddlewareRef>,
  kernel: Kernel,
): Middleware {
  if (typeof ref === 'function') return ref as Middleware
  const { target, params: given } = walkAlias(ref, aliases)
  // A function an alias names gets the use's parameters after `next`, as Laravel's handle():
  // r.alias('tenant', (req, next, id) => ...) used as 'tenant:acme'.
  if (typeof target === 'function') {
    const named = target as (
      request: FwRequest,
      next: Next,
      ...params: string[]
    ) => ReturnType<Middleware>
    return given.length === 0 ? named : (request, next) => named(request, next, ...given)
  }
  const name = (target as string).split(':', 1)[0]!
  const params = given
  const factory = Object.hasOwn(factories, name) ? factories[name] : undefined
  if (typeof factory !== 'function') {
    throw new FwError('FW_MIDDLEWARE_INVALID', `Middleware alias "${name}" has no implementation`, {
      hint: "Pass its factory in the kernel's middleware option, or register it with r.alias(name, fn).",
    })
  }
  let layer: unknown
  try {
    layer = factory(params, kernel)
  } catch (error) {
    throw new FwError(
      'FW_MIDDLEWARE_INVALID',
      `Middleware "${ref}" failed to build: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: `Check the factory given for "${name}" (the kernel's middleware option).`,
        cause: error,
      },
    )
  }
  if (typeof layer !== 'function')
    throw new FwError(
      'FW_MIDDLEWARE_INVALID',
      `Middleware "${ref}": its factory returned ${layer === null ? 'null' : typeof layer}, not a middleware function`,
      {
        hint: `A factory returns (request, next) => response: middleware: { ${name}: (params) => (req, next) => next(req) }.`,
      },
    )
  return layer as Middleware
}
