/**
 * Responses. Handlers return one of these (or plain data, answered as JSON); middleware may
 * derive new ones with `withHeader`. Bodies are a string, bytes, a readable stream or nothing;
 * views are rendered by the kernel's view engine when the response is sent.
 */
import type { Readable } from 'node:stream'
import type { HeaderMap } from './http-error.js'

export type Body = string | Uint8Array | Readable | null

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * An HTTP response: status, lowercase headers, body.
 * @example
 * return new FwResponse(202, { 'content-type': 'text/plain' }, 'queued')
 */
export class FwResponse {
  readonly status: number
  readonly headers: Readonly<HeaderMap>
  readonly body: Body
  /** A view to render instead of `body` (see `view()`). */
  readonly view: { name: string; data: Record<string, unknown> } | null

  constructor(status: number, headers: HeaderMap = {}, body: Body = null, view: FwResponse['view'] = null) {
    this.status = status
    this.headers = lowerKeys(headers, {})
    this.body = body
    this.view = view
  }

  /** A copy with one header set (replacing any previous value of that name). */
  withHeader(name: string, value: string | string[]): FwResponse {
    // Not a spread: V8 made a new hidden class for every spread copy here (measured in callgrind).
    const headers: HeaderMap = Object.assign({}, this.headers)
    headers[name.toLowerCase()] = value
    return FwResponse.#trusted(this.status, headers, this.body, this.view)
  }

  /** A copy with several headers set. */
  withHeaders(headers: HeaderMap): FwResponse {
    return FwResponse.#trusted(this.status, lowerKeys(headers, Object.assign({}, this.headers)), this.body, this.view)
  }

  withStatus(status: number): FwResponse {
    return FwResponse.#trusted(status, this.headers, this.body, this.view)
  }

  /**
   * JSON of `body` with its Content-Length worked out now: the adapter then writes the headers
   * as they are, with no copy to add it. Internal: `json()` calls it.
   */
  static ofJson(status: number, body: string, headers: HeaderMap | undefined): FwResponse {
    const fields: HeaderMap = { 'content-type': JSON_TYPE, 'content-length': `${Buffer.byteLength(body)}` }
    return FwResponse.#trusted(status, headers === undefined ? fields : lowerKeys(headers, fields), body, null)
  }

  /** Builds a copy from headers already lowercased (with* are on the hot path of middleware). */
  static #trusted(status: number, headers: HeaderMap, body: Body, view: FwResponse['view']): FwResponse {
    const response = Object.create(FwResponse.prototype) as { -readonly [K in keyof FwResponse]: FwResponse[K] }
    response.status = status
    response.headers = headers
    response.body = body
    response.view = view
    return response as FwResponse
  }

  header(name: string): string | undefined {
    const value = this.headers[name.toLowerCase()]
    return Array.isArray(value) ? value.join(', ') : value
  }
}

// Every async step of the pipeline resolves a promise with a response, and resolving looks up
// `then` on it (is it a thenable?). Found on the response's own prototype, as "not a function",
// the lookup stops there instead of searching Object.prototype: ~12 ns less per promise hop,
// of which a request through three async middleware makes eight.
Object.defineProperty(FwResponse.prototype, 'then', { value: undefined, writable: false, enumerable: false, configurable: false })

/**
 * JSON of `data` with `status`.
 * @example
 * return json({ id: 1 }, 201)
 */
export function json(data: unknown, status = 200, headers?: HeaderMap): FwResponse {
  return FwResponse.ofJson(status, JSON.stringify(data) ?? 'null', headers)
}

/** Any body with status and headers (text/plain unless a content-type is given). */
export function create(body: Body = '', status = 200, headers: HeaderMap = {}): FwResponse {
  const typed = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')
  return new FwResponse(status, typed ? headers : { 'content-type': 'text/plain; charset=utf-8', ...headers }, body)
}

/** 204 No Content. */
export function noContent(headers: HeaderMap = {}): FwResponse {
  return new FwResponse(204, headers, null)
}

/** A redirect (302 unless told otherwise) to `url`. */
export function redirect(url: string, status = 302, headers: HeaderMap = {}): FwResponse {
  if (/[\r\n]/.test(url)) throw new TypeError('redirect URL must not contain line breaks')
  return new FwResponse(status, { location: url, ...headers }, null)
}

/** A streamed body (sent with chunked transfer encoding). */
export function stream(body: Readable, status = 200, headers: HeaderMap = {}): FwResponse {
  return new FwResponse(status, { 'content-type': 'application/octet-stream', ...headers }, body)
}

/**
 * A view rendered by the kernel's view engine (HTML-escaping by default).
 * @example
 * return view('hello', { name: '<b>Ada</b>' }) // views/hello.html: <p>Hello {{ name }}</p>
 */
export function view(name: string, data: Record<string, unknown> = {}, status = 200): FwResponse {
  return new FwResponse(status, { 'content-type': 'text/html; charset=utf-8' }, null, { name, data })
}

/** Copies `headers` into `into` with lowercase names. */
function lowerKeys(headers: HeaderMap, into: HeaderMap): HeaderMap {
  for (const name in headers) into[name.toLowerCase()] = headers[name]!
  return into
}
