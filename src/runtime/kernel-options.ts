/**
 * What the kernel boots from (the spec's named inputs, in TypeScript form), and the signing keys
 * it derives from them and the environment, and the checks of its timeouts.
 */
import type { Registrar } from '../define/registrar.js'
import type { Env } from '../shared/app-env.js'
import { optionNames } from '../shared/option-names.js'
import type { Container } from './container.js'
import type { ErrorRenderer } from './error-boundary.js'
import type { Invoker } from './handlers.js'
import type { Kernel } from './kernel.js'
import type { HstsOptions } from './middleware/https-redirect.js'
import type { CorsOptions } from './middleware/cors-policy.js'
import type { ServiceProviderClass } from './kernel-providers.js'
import type { Logger, Middleware, MiddlewareFactory, RequestOptions, ViewEngine } from './types.js'

export type { Env }

/** Register/boot hooks run at kernel boot (spec: serviceProviders). */
export interface ServiceProvider {
  register?(kernel: Kernel): void | Promise<void>
  boot?(kernel: Kernel): void | Promise<void>
}

/** The matchers the kernel can run on (spec: matcher); only the sharded, cache-backed one. */
export type MatcherKind = 'sharded'

export interface KernelOptions {
  /** The compiled cache directory (spec: routeCache). */
  routeCache: string
  /** The matcher (spec: matcher): `'sharded'`, the only one and the default. */
  matcher?: MatcherKind | undefined
  /** The routes function (spec: register); its table must match the cache. */
  register: (r: Registrar) => void
  log?: Logger | undefined
  /**
   * Log one `info` line per answered request through `log` (pino-http's fields: `req` { id,
   * method, url, remoteAddress }, `res` { statusCode }, `responseTime` in ms), "request
   * completed", "request errored" for a 5xx (with `err`, what failed), or "request aborted" when
   * the client left first; with `attachKernel`, a line for what Node's parser refuses too.
   * Default false: off, it costs a request nothing. `fw serve --access-log` turns it on.
   */
  accessLog?: boolean | undefined
  env?: Env | undefined
  /** Show error details to clients (never in production). */
  debug?: boolean | undefined
  preGlobal?: readonly (string | Middleware)[] | undefined
  postGlobal?: readonly (string | Middleware)[] | undefined
  /** Container tags whose middleware is appended after preGlobal / postGlobal. */
  preGlobalTags?: readonly string[] | undefined
  postGlobalTags?: readonly string[] | undefined
  /** Set false to leave out client_ip, request_id, trace and the production HTTPS redirect. */
  builtins?: boolean | undefined
  /**
   * Strict-Transport-Security on responses to secure requests, where the HTTPS redirect is on
   * (production, with the builtins). Off unless asked for; `true` is `max-age=15552000` (180
   * days), without includeSubDomains; a handler's own header is kept.
   */
  hsts?: boolean | HstsOptions | undefined
  container?: Container | undefined
  invoker?: Invoker | undefined
  /** Provider objects, or classes the kernel instantiates once (with no arguments). */
  serviceProviders?: readonly (ServiceProvider | ServiceProviderClass)[] | undefined
  /** Bind the request per request lifecycle (AsyncLocalStorage); see currentRequest(). */
  requestScopeEnabled?: boolean | undefined
  /** Implementations of middleware aliases (e.g. auth, throttle, role), by alias name. */
  middleware?: Record<string, MiddlewareFactory> | undefined
  /**
   * CORS for browser apps on other origins: `{ origin, methods, allowedHeaders, exposedHeaders,
   * credentials, maxAge, paths }` (see CorsOptions). Default: off, at no cost per request.
   */
  cors?: CorsOptions | undefined
  errorRenderer?: ErrorRenderer | undefined
  /**
   * How long a custom error renderer may take (ms, default 5000): past it, the error is logged
   * and the default JSON error answered.
   */
  errorRendererTimeoutMs?: number | undefined
  /**
   * How long a response may wait on a client that stopped reading it (ms, default 60000; 0:
   * never): once its bytes have sat in the socket that long with none taken, the connection is
   * closed (nginx's send_timeout). A client that reads slowly, and a stream that is only quiet
   * (server-sent events between two events), are not cut.
   */
  sendTimeoutMs?: number | undefined
  views?: ViewEngine | undefined
  request?: RequestOptions | undefined
  /** Keys for signed URLs: the first signs, all verify. Default: URL_SIGNING_KEYS, else JWT_SECRET. */
  signingKeys?: readonly string[] | undefined
}

/**
 * Every kernel option by name (the type keeps the list complete and exact): Kernel.boot refuses
 * others, and fw.config.ts's `kernel` is checked against the same list (so this file imports
 * nothing the CLI would not want to load).
 */
export const KERNEL_OPTIONS: readonly string[] = optionNames<KernelOptions>({
  routeCache: 1,
  matcher: 1,
  register: 1,
  log: 1,
  env: 1,
  debug: 1,
  accessLog: 1,
  preGlobal: 1,
  postGlobal: 1,
  preGlobalTags: 1,
  postGlobalTags: 1,
  builtins: 1,
  hsts: 1,
  container: 1,
  invoker: 1,
  serviceProviders: 1,
  requestScopeEnabled: 1,
  middleware: 1,
  cors: 1,
  errorRenderer: 1,
  errorRendererTimeoutMs: 1,
  sendTimeoutMs: 1,
  views: 1,
  request: 1,
  signingKeys: 1,
})

/** The keys of signed URLs: the option, else URL_SIGNING_KEYS, else JWT_SECRET; a random one in development. */
export function signingKeys(
  options: KernelOptions,
  kernel: { env: Env; log: Logger },
): readonly string[] {
  const fromEnv = (process.env.URL_SIGNING_KEYS ?? '').split(',').filter(Boolean)
  const keys =
    options.signingKeys ??
    (fromEnv.length > 0 ? fromEnv : process.env.JWT_SECRET ? [process.env.JWT_SECRET] : [])
  if (keys.length > 0) return keys
  if (kernel.env === 'production')
    throw new Error('Set URL_SIGNING_KEYS (or JWT_SECRET) to sign URLs in production')
  kernel.log.warn(
    'No URL_SIGNING_KEYS: signed URLs use a random key and stop verifying after a restart',
  )
  return [crypto.randomUUID()]
}

// A custom error renderer's deadline: long enough for a template or a lookup, short of a
// client's patience; past it the default JSON error is answered.
export const RENDERER_TIMEOUT_MS = 5000

function checkRendererTimeout(ms: number | undefined): void {
  if (ms === undefined || (Number.isFinite(ms) && ms > 0 && ms <= 2 ** 31 - 1)) return
  throw new RangeError(`errorRendererTimeoutMs must be a number of milliseconds above 0, not ${ms}`)
}

// How long a response waits on a client that takes none of its bytes (nginx's send_timeout).
export const SEND_TIMEOUT_MS = 60_000

function checkSendTimeout(ms: number | undefined): void {
  if (ms === undefined || (Number.isInteger(ms) && ms >= 0 && ms <= 2 ** 31 - 1)) return
  throw new RangeError(
    `sendTimeoutMs must be a whole number of milliseconds, 0 (never) or more, not ${typeof ms === 'string' ? JSON.stringify(ms) : String(ms)}`,
  )
}

/**
 * Refuses timeouts the kernel cannot honour (a string, NaN, beyond a 32-bit timer) at boot.
 * @example
 * checkTimeouts({ errorRendererTimeoutMs: 2000, sendTimeoutMs: 0 })
 */
export function checkTimeouts(
  options: Pick<KernelOptions, 'errorRendererTimeoutMs' | 'sendTimeoutMs'>,
): void {
  checkRendererTimeout(options.errorRendererTimeoutMs)
  checkSendTimeout(options.sendTimeoutMs)
}

/**
 * Refuses an `accessLog` that is not a boolean (`'false'` from an environment variable would turn
 * it on), at boot.
 * @example
 * checkAccessLog('yes') // throws TypeError: accessLog must be true or false, not "yes"
 */
export function checkAccessLog(value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return
  throw new TypeError(
    `accessLog must be true or false, not ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`,
  )
}
