/**
 * Typed HTTP errors. Middleware, handlers and the kernel throw them; the error boundary renders
 * their status, public message and headers. Only `expose`d messages reach the client (4xx by
 * default); a 5xx shows a generic message and its details go to the log.
 */
import { STATUS_CODES } from 'node:http'
import { TOKEN } from './request/headers.js'

export type HeaderMap = Record<string, string | string[]>

export interface HttpErrorOptions {
  message?: string | undefined
  /**
   * Fields of the error response: an object of names and values, or a `Headers` or `Map` (an
   * upstream's headers; each Set-Cookie of a `Headers` stays its own line). A string or a list
   * is a TypeError.
   */
  headers?: HeaderMap | Headers | ReadonlyMap<string, string | string[]> | undefined
  /** Whether `message` may be shown to the client; default: status < 500. */
  expose?: boolean | undefined
  cause?: unknown
  /** Extra JSON fields for the error body (e.g. `error_description`, `path`). */
  body?: object | undefined
}

/**
 * An error that maps to an HTTP response.
 * @example
 * throw new HttpError(409, { message: 'Email already registered' })
 * throw forbidden('Admins only')
 */
export class HttpError extends Error {
  readonly status: number
  readonly headers: HeaderMap
  readonly expose: boolean
  readonly body: Record<string, unknown> | undefined

  constructor(status: number, options: HttpErrorOptions = {}) {
    super(
      options.message ?? STATUS_CODES[status] ?? 'Error',
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.name = 'HttpError'
    this.status = status
    this.headers = headerFields(options.headers)
    checkFields(options.body, 'body')
    this.expose = options.expose ?? status < 500
    this.body = options.body as Record<string, unknown> | undefined
  }

  /** The message a client may see. */
  get publicMessage(): string {
    return this.expose ? this.message : (STATUS_CODES[this.status] ?? 'Error')
  }
}

/**
 * The `headers` option as a map: a `Headers` or a `Map` (an upstream's headers) by its entries,
 * which were dropped without a word; a string or a list is a TypeError (each character or index
 * became a header line, `0: o`).
 */
function headerFields(value: unknown): HeaderMap {
  if (value === undefined || value === null) return {}
  if (value instanceof Headers) {
    // Each Set-Cookie its own: the entries join them with ", " (and Expires has a comma).
    const fields: HeaderMap = Object.fromEntries(value)
    const cookies = value.getSetCookie()
    if (cookies.length > 0) fields['set-cookie'] = cookies
    return fields
  }
  if (value instanceof Map) return Object.fromEntries(value as Map<string, string>)
  checkFields(value, 'headers')
  return value as HeaderMap
}

/** Refuses an option that is no object of names and values (a string, a list, a Map). */
function checkFields(value: unknown, option: 'headers' | 'body'): void {
  if (value === undefined || value === null) return
  const listed = typeof value === 'object' && (Array.isArray(value) || Symbol.iterator in value)
  if (typeof value !== 'object' || listed) {
    const kind = listed ? 'a list or a Map (Object.fromEntries() makes one)' : `a ${typeof value}`
    throw new TypeError(`HttpError ${option} must be an object of names and values, not ${kind}`)
  }
}

/**
 * A status as a log line names it: `'404'` (a string) or `404.5` is no status, and "status 404"
 * alone read as a valid one.
 * @example
 * describeStatus('404') // '"404" (a string)'
 */
export function describeStatus(status: unknown): string {
  return typeof status === 'number'
    ? String(status)
    : `${JSON.stringify(String(status))} (a ${typeof status})`
}

type Factory = (message?: string, options?: Omit<HttpErrorOptions, 'message'>) => HttpError
const OPTION_KEYS = new Set(['message', 'headers', 'expose', 'cause', 'body'])
const factory =
  (status: number): Factory =>
  (message, options) => {
    // From JavaScript, a header map in place of the options (`badRequest('m', { 'x-a': 'b' })`)
    // would otherwise be dropped without a word: the response would carry none of its headers.
    const unknown = Object.keys(options ?? {}).filter((key) => !OPTION_KEYS.has(key))
    if (unknown.length > 0) {
      const keys = unknown.join(', ')
      throw new TypeError(`Unknown option(s) ${keys}: headers go under { headers: {...} }`)
    }
    return new HttpError(status, { ...options, ...(message === undefined ? {} : { message }) })
  }

export const badRequest = factory(400)
export const unauthorized = factory(401)
export const forbidden = factory(403)
export const notFound = factory(404)
export const conflict = factory(409)
export const gone = factory(410)
export const payloadTooLarge = factory(413)
export const unsupportedMediaType = factory(415)
export const unprocessable = factory(422)
export const tooManyRequests = factory(429)
export const internalError = factory(500)
export const serviceUnavailable = factory(503)

/**
 * 405 with the `Allow` header listing the methods the path does answer (a list, or one string
 * such as `'GET, HEAD'`; none gives an empty `Allow`: RFC 9110 §10.2.1 wants the header).
 * @example
 * throw methodNotAllowed(['GET', 'HEAD'])
 */
export function methodNotAllowed(
  allow: readonly string[] | string = [],
  message?: string,
): HttpError {
  // From JavaScript, swapped arguments (`methodNotAllowed('Nope', { allow: 'GET' })`) would send
  // `Allow: Nope` and the body "[object Object]".
  const methods =
    typeof allow === 'string' ? allow.split(',').flatMap((m) => m.trim() || []) : allow
  const tokens =
    Array.isArray(methods) && methods.every((m) => typeof m === 'string' && TOKEN.test(m))
  if (!tokens || (message !== undefined && typeof message !== 'string'))
    throw new TypeError("Expected methodNotAllowed(['GET', 'HEAD'], 'message')")
  return new HttpError(405, {
    ...(message ? { message } : {}),
    headers: { allow: methods.join(', ') },
  })
}
