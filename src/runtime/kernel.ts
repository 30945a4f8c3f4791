/**
 * The kernel: boots from the compiled route cache and the routes function, resolves every route's
 * middleware and handler once, and handles requests through pre-global → group → route →
 * post-global middleware around the handler, with the error boundary at every step.
 */
import type { Registrar } from '../define/registrar.js'
import type { MiddlewareRef } from '../shared/route-record.js'
import { Container } from './container.js'
import { HTTP_METHODS } from '../shared/methods.js'
import { badRequest, methodNotAllowed, notFound } from './http-error.js'
import { loadRouter, type CompiledRouter } from './load-router.js'
import { createLogger, guardLogger } from './logger.js'
import { builtinFactories } from './middleware/index.js'
import { corsPolicy, withCors, type CorsPolicy } from './middleware/cors.js'
import { presetRequestId, withContext } from './middleware/context.js'
import { hstsHeader } from './middleware/https-redirect.js'
import { moduleFactories } from './middleware/modules.js'
import {
  compose,
  entryOf,
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
  RequestOptions,
  UrlParams,
  UrlQuery,
  ViewEngine,
} from './types.js'
import { renderView, TemplateViews } from './views.js'
import { compileTrust } from './request/options.js'
import { setCurrentKernel } from './app.js'
import { checkMatcher, checkOptionNames, runProviderHook, toProvider } from './kernel-providers.js'
import {
  checkAccessLog,
  checkTimeouts,
  RENDERER_TIMEOUT_MS,
  SEND_TIMEOUT_MS,
  signingKeys,
  type Env,
  type KernelOptions,
} from './kernel-options.js'
import { handlerStep, type HandlerSettings } from './kernel-handler.js'
import { checkBuiltinParams, resolveMiddleware, warnUnbound } from './kernel-middleware.js'
import { rescueError, type RescueSettings } from './kernel-rescue.js'
import { inScope, kernelScope, requestInScope, requestScope, scopes } from './kernel-scope.js'
import { appEnvWarning, envOf } from '../shared/app-env.js'

export type { ServiceProviderClass } from './kernel-providers.js'
export type { Env, KernelOptions, MatcherKind, ServiceProvider } from './kernel-options.js'
export { currentRequest } from './kernel-scope.js'

// Whether this process said that its APP_ENV runs as development (appEnvWarning).
let appEnvWarned = false

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
  readonly requestOptions: RequestOptions
  /** See KernelOptions.sendTimeoutMs; the node adapter applies it. */
  readonly sendTimeoutMs: number
  /** See KernelOptions.accessLog; the node adapter logs the lines. */
  readonly accessLog: boolean
  /** Whether the built-in request context (client_ip, request_id, trace) is on (KernelOptions.builtins). */
  readonly builtins: boolean
  readonly #options: KernelOptions
  /** The Strict-Transport-Security of production's secure responses (KernelOptions.hsts). */
  readonly #hsts: string | null
  readonly #views: ViewEngine
  readonly #rescueSettings: RescueSettings
  /** The `cors` option checked; null (off) leaves CORS out of the pipeline altogether. */
  readonly #cors: CorsPolicy | null
  #routes: Step[] = []
  #entry: Entry = () => {
    throw new Error('The kernel is still booting: it answers requests once Kernel.boot() resolves')
  }

  private constructor(options: KernelOptions, router: CompiledRouter) {
    this.#options = options
    this.env = envOf(options.env)
    this.log = options.log === undefined ? createLogger(this.env) : guardLogger(options.log)
    // Once a process: a watch reload boots a kernel again.
    const warning = options.env === undefined && !appEnvWarned ? appEnvWarning() : null
    if (warning !== null) {
      appEnvWarned = true
      this.log.warn(warning)
    }
    this.container = options.container ?? new Container()
    // The spec's request scope: the request is bound in the container for its lifecycle (an
    // app's own 'request' binding is left alone).
    if (options.requestScopeEnabled === true) scopes.inUse = true
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
    this.accessLog = options.accessLog === true
    this.builtins = options.builtins !== false
    this.#hsts = hstsHeader(options.hsts)
    this.#cors = corsPolicy(options.cors)
    this.#rescueSettings = {
      debug: this.env !== 'production' && (options.debug ?? false),
      log: this.log,
      renderer: options.errorRenderer,
      timeoutMs: options.errorRendererTimeoutMs ?? RENDERER_TIMEOUT_MS,
      scoped: options.requestScopeEnabled === true,
      renderView: (response) => this.#render(response),
    }
  }

  /** Loads the cache, runs the service providers and resolves every route's pipeline. */
  static async boot(options: KernelOptions): Promise<Kernel> {
    checkOptionNames(options)
    checkMatcher(options.matcher)
    checkTimeouts(options)
    checkAccessLog(options.accessLog)
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
      // Asked by verify() only, and so only for signed URLs: routing the request again is cheap.
      routedToDomain: (request) => {
        if (!this.#hosts) return false
        const found = this.router.match(request.getMethod(), request.getPath(), request.getHost())
        return 'route' in found && found.route.host !== null
      },
    }))
  }

  urlFor(name: string, params?: UrlParams, query?: UrlQuery, absolute?: boolean | string): string {
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
    if (!this.#options.requestScopeEnabled) {
      // Handled inside a request of a kernel with the scope on (an in-process sub-request): its
      // code saw that other request as currentRequest(), and the URL helpers that kernel.
      if (
        !scopes.inUse ||
        (kernelScope.getStore() === undefined && requestScope.getStore() === undefined)
      )
        return this.#entry(request, context, finish, failed)
      return kernelScope.exit(() =>
        requestScope.exit(this.#entry<C, T>, request, context, finish, failed),
      )
    }
    return kernelScope.run(this, () =>
      requestScope.run(request, this.#entry<C, T>, request, context, finish, failed),
    )
  }

  /**
   * The error boundary's answer to `error` raised for `request` after the pipeline answered: for
   * adapters, when a streamed body fails before its first byte (a file that cannot be opened).
   * Never rejects; the error is logged as the boundary logs any other.
   */
  answerError(error: unknown, request: FwRequest): Promise<FwResponse> {
    if (!this.#options.requestScopeEnabled) return this.#rescue(error, request)
    return kernelScope.run(this, () => this.#rescue(error, request))
  }

  /** The middleware refs bound to container `tags`, in order. */
  #tagged(tags: readonly string[] | undefined): MiddlewareRef[] {
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
      (scoped
        ? requestScope.run(request, () => this.#render(response))
        : this.#render(response)
      ).catch((error: unknown) => rescue(error, request))
    const settings: HandlerSettings = {
      invoker: this.#options.invoker,
      container: this.container,
      instances: new Map(),
      scoped,
      rescue,
      renderView: (response) => this.#render(response),
    }
    this.#routes = registrar.routes.map((record) => {
      const final = handlerStep(record, settings)
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
    const composed = compose(pre, dispatch, rescue, { finalRescues: true, render })
    // CORS outside the global middleware: preflights answered before any guard, and every
    // response, errors and routing misses included, given its headers.
    const pipeline =
      this.#cors === null ? composed : withCors(composed, this.#cors, this.#pathMethods, rescue)
    // The built-ins (request context, production HTTPS redirect) wrap everything, outermost.
    // With the access log on, the request id is the one the node adapter chose for its line.
    if (!this.builtins) return entryOf(pipeline)
    const https = this.env === 'production' ? { hsts: this.#hsts } : null
    return this.accessLog
      ? withContext(pipeline, rescue, https, presetRequestId)
      : withContext(pipeline, rescue, https)
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

  /** The methods of `request`'s path (its 405 `Allow`, asked with `probe`, no route's method), null for none. */
  readonly #pathMethods = (request: FwRequest, probe: string): readonly string[] | null => {
    const found = this.router.match(
      probe,
      request.getPath(),
      this.#hosts ? request.getHost() : undefined,
    )
    return 'allow' in found ? found.allow : null
  }

  #rescue(thrown: unknown, request: FwRequest): Promise<FwResponse> {
    return rescueError(thrown, request, this.#rescueSettings)
  }

  #render(response: FwResponse): Promise<FwResponse> {
    return renderView(this.#views, response)
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
