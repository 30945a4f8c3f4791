/**
 * Turns route handlers into callables and their results into responses. A handler receives the
 * request first, then the route parameters in pattern order (domain parameters first).
 */
import { Readable } from 'node:stream'
import type { HandlerRef } from '../shared/route-record.js'
import type { Container } from './container.js'
import type { HeaderMap } from './http-error.js'
import { create, FwResponse, json, noContent, stream } from './response.js'
import { isAsyncIterable } from './response-body.js'
import type { FwRequest } from './request/request.js'

export type Invoke = (request: FwRequest, params: readonly unknown[]) => unknown

/**
 * A route's handler as an invoker gets it, as the routes file gave it: a function of the request
 * and the route parameters, a `[Class, 'method']` pair or a `'Class@method'` string.
 */
export type InvokedHandler =
  | ((request: FwRequest, ...params: unknown[]) => unknown)
  | readonly [new (...args: never[]) => unknown, string]
  | string

/**
 * Custom handler invocation (spec: "invoker"), e.g. to inject services: it calls the handler and
 * returns what the handler would (the kernel turns it into a response).
 * @example
 * const invoker: Invoker = (handler, request, params) => {
 *   if (typeof handler !== 'function') throw new Error('This app routes to functions only')
 *   return handler(request, ...params, services) // a service as the last argument
 * }
 */
export type Invoker = (
  handler: InvokedHandler,
  request: FwRequest,
  params: readonly unknown[],
) => unknown

/** Resolves a handler once, at boot; a controller class is instantiated once per kernel, on first use. */
export function resolveHandler(
  handler: HandlerRef,
  container: Container,
  instances: Map<unknown, Record<string, unknown>>,
): Invoke {
  if (typeof handler === 'function') {
    const fn = handler as (...args: unknown[]) => unknown
    // A spread call costs more than the handler itself on small routes: spell out short lists.
    return (request, params) => {
      switch (params.length) {
        case 0:
          return fn(request)
        case 1:
          return fn(request, params[0])
        case 2:
          return fn(request, params[0], params[1])
        case 3:
          return fn(request, params[0], params[1], params[2])
        default:
          return fn(request, ...params)
      }
    }
  }
  if (typeof handler === 'string') {
    const [key = '', method] = handler.split('@')
    const name = method ?? '__invoke'
    let target: Record<string, unknown> | undefined
    return (request, params) => {
      target ??= container.get<Record<string, unknown> | undefined>(key)
      // 'Key' calls the entry's __invoke, or the entry itself when it is a function.
      let fn: unknown = target?.[name]
      if (typeof fn !== 'function' && method === undefined) fn = target
      if (typeof fn !== 'function')
        throw new Error(
          target instanceof Promise
            ? `Handler "${handler}": "${key}" is a promise (an async factory): bind its value in boot()`
            : `Handler "${handler}": "${key}" has no method "${name}"`,
        )
      return (fn as (...args: unknown[]) => unknown).call(target, request, ...params)
    }
  }
  const [Class, method] = handler as readonly [new () => Record<string, unknown>, string]
  return (request, params) => {
    let target = instances.get(Class)
    if (target === undefined) {
      target = container.has(Class.name)
        ? container.get<Record<string, unknown>>(Class.name)
        : new Class()
      instances.set(Class, target)
    }
    const fn = target[method]
    // An instance bound by the class's name may lack the method the build found on the class:
    // name both, rather than "Cannot read properties of undefined (reading 'call')".
    if (typeof fn !== 'function')
      throw new Error(
        `Handler [${Class.name}, '${method}']: the instance has no method "${method}"`,
      )
    return (fn as (...args: unknown[]) => unknown).call(target, request, ...params)
  }
}

/**
 * What a handler returned, as a response: responses as they are (a web `Response` with its
 * status, headers and body), data as JSON, nothing as 204, binary data as bytes, a Node or web
 * stream or an async iterable streamed; an error is thrown, a function or a symbol is a
 * TypeError (a 500).
 * Other objects (a Map, a class instance) are JSON as `JSON.stringify` makes it, as in Fastify.
 */
export function toResponse(result: unknown): FwResponse {
  if (result instanceof FwResponse) return result
  // Kept small, so that the optimising compiler inlines it into its caller: with every check of
  // otherResponse in it, it was called instead, and as it runs once per request, it stayed in
  // baseline code for tens of thousands of requests (~300-600 instructions each). Data goes
  // straight to JSON: a plain object or array is none of the kinds otherResponse tells apart.
  if (isPlainData(result)) return json(result)
  return otherResponse(result)
}

/** A plain object or array that is not async iterable: JSON whatever else holds. */
function isPlainData(result: unknown): boolean {
  if (typeof result !== 'object' || result === null) return false
  const proto: unknown = Object.getPrototypeOf(result)
  return (proto === Object.prototype || proto === Array.prototype) && !isAsyncIterable(result)
}

/** `toResponse` for anything but a response or plain data. */
function otherResponse(result: unknown): FwResponse {
  // Returning an error instead of throwing it is an easy slip: answer it the same way (an
  // HttpError with its status, any other a 500, as Fastify does), not as `{}`, a 200 hiding it.
  if (result instanceof Error) throw result
  if (result === undefined || result === null) return noContent()
  if (typeof result === 'string') return create(result)
  const bytes = asBytes(result)
  if (bytes !== null) return create(bytes, 200, { 'content-type': 'application/octet-stream' })
  if (result instanceof Readable || result instanceof ReadableStream) return stream(result)
  if (result instanceof Response || isOtherFetchResponse(result)) return fromWebResponse(result)
  // A function (a handler factory not called) or a symbol has no JSON: JSON.stringify would
  // make it `null`, a 200 that hides the slip.
  if (typeof result === 'function' || typeof result === 'symbol')
    throw new TypeError(`The handler returned a ${typeof result} instead of a response`)
  // A Blob (`await response.blob()`, a File) is its bytes, of its type; its JSON was `{}`.
  if (result instanceof Blob)
    return stream(result.stream(), 200, {
      'content-type': result.type || 'application/octet-stream',
      'content-length': String(result.size),
    })
  // A generator (`function*`) is no async iterable: its JSON was `{}`, a 200 that hid the slip.
  if (Object.prototype.toString.call(result) === '[object Generator]')
    throw new TypeError(
      'The handler returned a generator: make it an async generator (async function*) to stream what it yields',
    )
  // An async generator streams what it yields (its JSON would be `{}`); an object that says
  // how it is JSON (`toJSON`) stays JSON.
  if (isAsyncIterable(result) && typeof (result as { toJSON?: unknown }).toJSON !== 'function')
    return stream(result)
  return json(result)
}

/**
 * `value` as bytes when it is binary data: a Uint8Array (a Buffer), another typed array, a
 * DataView or an ArrayBuffer (`await response.arrayBuffer()`), whose JSON was `{}` or an object
 * of numbers by index.
 */
function asBytes(value: unknown): Uint8Array | null {
  if (value instanceof Uint8Array) return value
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  return value instanceof ArrayBuffer ? new Uint8Array(value) : null
}

type WebStream = Parameters<typeof Readable.fromWeb>[0]

// Fields about the connection a response came over, not ours (RFC 9110 §7.6.1).
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']

/**
 * A WHATWG `Response` (from fetch, or a library built on it): status, headers, streamed body. A
 * proxied upstream's hop-by-hop fields (and those its Connection names) are not passed on; nor,
 * from fetch(), which decodes a gzip/br/deflate body as it reads it, its Content-Encoding and
 * Content-Length: a client would decode the plain bytes again, or wait for the encoded length.
 */
function fromWebResponse(response: Response): FwResponse {
  // Else the log said only "ReadableStream is locked".
  if (response.bodyUsed)
    throw new TypeError('The handler returned a web Response whose body was already read')
  const headers: HeaderMap = {}
  const connection = response.headers.get('connection')
  const dropped = connection === null ? HOP_BY_HOP : [...HOP_BY_HOP, ...tokens(connection)]
  const decoded = response.type !== 'default' && response.headers.has('content-encoding')
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie' || dropped.includes(name)) return
    if (decoded && (name === 'content-encoding' || name === 'content-length')) return
    headers[name] = value
  })
  // Joined with ", " by forEach, which would break cookies whose Expires has a comma.
  const cookies = setCookies(response.headers)
  if (cookies.length > 0) headers['set-cookie'] = cookies
  const source: unknown = response.body
  // node-fetch's body is a Node stream already.
  const body =
    source === null || source === undefined
      ? null
      : source instanceof Readable
        ? source
        : Readable.fromWeb(source as WebStream)
  return new FwResponse(response.status, headers, body)
}

/**
 * Whether `value` is a fetch `Response` of another implementation: the `undici` package's own
 * `fetch()` (not the copy Node bundles), or node-fetch. Not `instanceof` the global class, it
 * was JSON, `{}`: a 200 that lost the upstream's status, headers and body.
 */
function isOtherFetchResponse(value: unknown): value is Response {
  return (
    Object.prototype.toString.call(value) === '[object Response]' &&
    typeof (value as { headers?: { forEach?: unknown } }).headers?.forEach === 'function'
  )
}

/** The Set-Cookie fields of `headers`, one each (node-fetch's Headers list them with `raw()`). */
function setCookies(headers: Headers): string[] {
  if (typeof headers.getSetCookie === 'function') return headers.getSetCookie()
  const raw = (headers as { raw?: () => Record<string, string[] | undefined> }).raw
  return typeof raw === 'function' ? (raw.call(headers)['set-cookie'] ?? []) : []
}

/** The lowercase field names a Connection header lists. */
function tokens(connection: string): string[] {
  return connection.split(',').map((token) => token.trim().toLowerCase())
}
