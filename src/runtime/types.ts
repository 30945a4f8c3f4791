/**
 * The contracts between the kernel, the request object and middleware.
 */
import type { FwResponse } from './response.js'
import type { FwRequest } from './request/request.js'

/** Calls the rest of the pipeline with a (possibly derived) request. */
export type Next = (request: FwRequest) => Promise<FwResponse>

/**
 * A middleware: receives the request and the rest of the pipeline, returns a response.
 * @example
 * const timing: Middleware = async (req, next) => (await next(req)).withHeader('x-took', '1ms')
 */
export type Middleware = (request: FwRequest, next: Next) => FwResponse | Promise<FwResponse>

/** Builds a middleware from an alias's parameters (`throttle:5,60` → ['5', '60']). */
export type MiddlewareFactory = (params: string[], context: KernelServices) => Middleware

/** A logger with the pino/PSR-3 levels the framework uses. */
export interface Logger {
  debug(obj: object | string, msg?: string): void
  info(obj: object | string, msg?: string): void
  warn(obj: object | string, msg?: string): void
  error(obj: object | string, msg?: string): void
}

/** Renders a named view; HTML-escapes interpolated values unless told otherwise. */
export interface ViewEngine {
  render(name: string, data: Record<string, unknown>): string | Promise<string>
}

/** Limits of request bodies (all inclusive). */
export interface BodyLimits {
  /** JSON and urlencoded bodies, bytes after decompression. Default 1 MiB. */
  body: number
  /** One uploaded file, bytes. Default 10 MiB. */
  fileSize: number
  /** Files per request. Default 20. */
  files: number
  /** All uploaded files of one request together, bytes. Default 50 MiB. */
  totalFileSize: number
  /** Non-file multipart fields. Default 1000. */
  fields: number
  /** Keys in a parsed JSON/urlencoded body, all levels. Default 1000. */
  keys: number
  /** Nesting depth of JSON/urlencoded bodies. Default 32. */
  depth: number
  /** Multipart parts (fields + files). Default 1020. */
  parts: number
}

export const DEFAULT_BODY_LIMITS: BodyLimits = {
  body: 1024 * 1024,
  fileSize: 10 * 1024 * 1024,
  files: 20,
  totalFileSize: 50 * 1024 * 1024,
  fields: 1000,
  keys: 1000,
  depth: 32,
  parts: 1020,
}

/** How requests are built: proxy trust, limits, where uploads go. */
export interface RequestOptions {
  /** Whether an address is a trusted proxy (X-Forwarded-* honoured). Default: loopback only. */
  trustProxy?: ((address: string, hop: number) => boolean) | undefined
  limits?: Partial<BodyLimits> | undefined
  /** Directory for uploaded files. Default: os.tmpdir(). */
  uploadDir?: string | undefined
}

/**
 * A query for urlFor: an object (one typed by an interface too; arrays and objects in it as
 * bracketed keys), or its entries as a URLSearchParams (a key given twice written as a list) or a
 * Map.
 * @example
 * urlFor('search', {}, new URLSearchParams('tag=a&tag=b')) // '/search?tag%5B0%5D=a&tag%5B1%5D=b'
 */
export type UrlQuery = object | URLSearchParams | ReadonlyMap<string, unknown>

/**
 * The parameters of a generated URL, by name: any object (one typed by an interface too).
 * @example
 * const params: UrlParams = user // interface User { id: number }: urlFor('users.show', user)
 */
export type UrlParams = object

/** What middleware factories may use from the kernel. */
export interface KernelServices {
  log: Logger
  env: 'production' | 'development' | 'test'
  /** URL generation of the compiled router (used by signed URLs, redirects). */
  urlFor(name: string, params?: UrlParams, query?: UrlQuery, absolute?: boolean | string): string
  /** Resolves a service registered by a provider, or undefined. */
  resolve<T = unknown>(key: string): T | undefined
}
