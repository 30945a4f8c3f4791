/**
 * Responses. Handlers return one of these (or plain data, answered as JSON); middleware may
 * derive new ones with `withHeader`. Bodies are a string, bytes, a readable stream or nothing;
 * views are rendered by the kernel's view engine when the response is sent.
 */
import { Readable } from 'node:stream'
import { describeStatus, type HeaderMap } from './http-error.js'
import { toBody, type BodyInput } from './response-body.js'
import { lowerName } from './request/headers.js'
import {
  expiredCookieField,
  setCookieField,
  withCookieField,
  type CookieOptions,
  type ExpiredCookieOptions,
} from './set-cookie.js'

export type Body = string | Uint8Array | Readable | null

const JSON_TYPE = 'application/json; charset=utf-8'

/** What `writeHead` takes: a header object, or a flat list of names and values. */
export type WireHeaders = Readonly<HeaderMap> | ReadonlyArray<string | string[]>

// The constructor's `headers` when a derived response sets its own storage right after.
const DERIVED: HeaderMap = Object.freeze({}) as HeaderMap

/**
 * An HTTP response: status, lowercase headers, body.
 * @example
 * return new FwResponse(202, { 'content-type': 'text/plain' }, 'queued')
 */
export class FwResponse {
  readonly status: number
  readonly body: Body
  /** A view to render instead of `body` (see `view()`). */
  readonly view: { name: string; data: Record<string, unknown> } | null
  // Headers are never changed once set, so responses derived by with* share them. `withHeader`
  // of a new name adds it to `#added` (name, value, ...) on top of the shared `#own` instead of
  // copying the object: the request id every response gets then costs no copy, and the node
  // adapter writes own and added headers as one flat list.
  #own: HeaderMap
  #added: ReadonlyArray<string | string[]> | null = null
  #merged: HeaderMap | null = null

  constructor(
    status: number,
    headers: HeaderMap = {},
    body: Body = null,
    view: FwResponse['view'] = null,
  ) {
    this.status = status
    this.#own = headers === DERIVED ? DERIVED : lowerKeys(headers, {}, sizedByFw(body))
    this.body = body
    this.view = view
  }

  /** The headers, lowercase names. */
  get headers(): Readonly<HeaderMap> {
    if (this.#added === null) return this.#own
    return (this.#merged ??= addAll(Object.assign({}, this.#own), this.#added))
  }

  /** A copy with one header set (replacing any previous value of that name). */
  withHeader(name: string, value: string | string[]): FwResponse {
    const lower = lowerName(name)
    if (isFraming(lower) && (lower === TE || sizedByFw(this.body))) return this
    const added = this.#added
    if (this.#has(lower)) {
      // Not a spread: V8 made a new hidden class for every spread copy here (measured in callgrind).
      const headers: HeaderMap = Object.assign({}, this.headers)
      headers[lower] = value
      return FwResponse.#derive(this.status, headers, null, this.body, this.view)
    }
    return FwResponse.#derive(
      this.status,
      this.#own,
      added === null ? [lower, value] : [...added, lower, value],
      this.body,
      this.view,
    )
  }

  /** A copy with several headers set. */
  withHeaders(headers: HeaderMap): FwResponse {
    return FwResponse.#derive(
      this.status,
      lowerKeys(headers, Object.assign({}, this.headers), sizedByFw(this.body)),
      null,
      this.body,
      this.view,
    )
  }

  /**
   * A copy that sets cookie `name` to `value`, percent-encoded (`;`, CR and LF cannot end it):
   * one more Set-Cookie field, replacing an earlier one of the same name, path and domain.
   * Defaults: `path: '/'`, `httpOnly: true`, `sameSite: 'lax'`, not `secure`. A name that is no
   * token, a control character in an attribute, a maxAge that is no finite number, `sameSite:
   * 'none'` or `partitioned` without `secure`, and a `__Secure-` or `__Host-` cookie that breaks
   * its prefix's rules are a TypeError (a 500 when a handler makes it).
   * @example
   * return json({ ok: true }).withCookie('theme', 'dark', { maxAge: 60 * 60 * 24 * 365 })
   */
  withCookie(name: string, value: string, options?: CookieOptions): FwResponse {
    return this.#withSetCookie(setCookieField(name, value, options))
  }

  /**
   * A copy that expires cookie `name` (empty, `Max-Age=0`, an Expires in 1970): give the path and
   * domain it was set with, as a browser only replaces the cookie they name.
   * @example
   * return redirect('/').withoutCookie('sid')
   */
  withoutCookie(name: string, options?: ExpiredCookieOptions): FwResponse {
    return this.#withSetCookie(expiredCookieField(name, options))
  }

  #withSetCookie(field: string): FwResponse {
    return this.withHeader('set-cookie', withCookieField(this.headers['set-cookie'], field))
  }

  withStatus(status: number): FwResponse {
    return FwResponse.#derive(status, this.#own, this.#added, this.body, this.view)
  }

  /**
   * JSON of `body` with its Content-Length worked out now: the adapter then writes the headers
   * as they are, with no copy to add it. Internal: `json()` calls it.
   */
  static ofJson(status: number, body: string, headers: HeaderMap | undefined): FwResponse {
    // The length is the body's own: a caller's Content-Length (headers copied from another
    // response) would break the framing. A 204 or 304 sends no content, so declares no length.
    // Nor has a 304 a type of its own: a cache puts the fields of a 304 on the response it
    // stored (RFC 9111 §4.3.4), so an implied JSON type replaced the type of an HTML page.
    const fields: HeaderMap = status === 304 ? {} : { 'content-type': JSON_TYPE }
    const own = headers === undefined ? fields : lowerKeys(headers, fields, true)
    if (status !== 204 && status !== 304) own['content-length'] = `${Buffer.byteLength(body)}`
    return FwResponse.#derive(status, own, null, body, null)
  }

  /**
   * `hasHeader` for a name already lowercase, as the adapter's hot path has them (no lookup of
   * the lowercase form).
   * @example
   * FwResponse.hasLowerHeader(response, 'etag')
   */
  static hasLowerHeader(response: FwResponse, lower: string): boolean {
    return response.#has(lower)
  }

  /**
   * The headers as `res.writeHead()` takes them, with Content-Length added for a string or byte
   * body that has none: the shared header object itself when nothing is to be added to it, else
   * a flat list (no copy of the object). Internal: the node adapter calls it.
   */
  static wireHeaders(response: FwResponse): WireHeaders {
    const own = response.#own
    const added = response.#added
    const body = response.body
    const status = response.status
    // A 1xx is an interim answer: the client would wait for a final one that never comes, or
    // read the next request's answer as this one's (101: as another protocol). 600+ is no status,
    // nor is 204.5 or '204': Node truncates them to a 204, sent with the Content-Length worked out
    // here for a 200 (as Fastify, a 500 instead).
    if (!(Number.isInteger(status) && status >= 200 && status <= 599))
      throw new RangeError(`Invalid response status ${describeStatus(status)}`)
    // No Content-Length on a 204 or 304, which send no content (RFC 9110 §8.6). A response with
    // no body (a redirect) says 0: without a length Node would frame it as chunked; with a
    // caller's other length (headers copied from another response) the client would wait for
    // bytes that never come, or take the next answer on the connection for them.
    if (body === null && status !== 204 && status !== 304 && response.#has('content-length'))
      return withLength(response.headers, '0')
    // Nor may a 204 declare one (§8.6: MUST NOT), as `json(data).withStatus(204)` or headers
    // copied from another response did; a 304's may be the 200's length, which a body's is.
    if (status === 204 && response.#has('content-length')) return withLength(response.headers, null)
    const length =
      (typeof body === 'string' || body instanceof Uint8Array || body === null) &&
      status !== 204 &&
      status !== 304 &&
      !response.#has('content-length')
        ? body === null
          ? '0'
          : String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength)
        : null
    // A stream's length that is no number of bytes fits no body: a 500 now, not a cut connection.
    // (After `length`: a string or byte body, the hot path, never gets to the instanceof.)
    if (
      length === null &&
      body instanceof Readable &&
      !/^\d+$/.test(response.header('content-length') ?? '0')
    )
      throw new RangeError('A streamed body declares a Content-Length that is no number of bytes')
    if (added === null && length === null) return own
    const list: (string | string[])[] = []
    for (const name in own) list.push(name, own[name]!)
    if (added !== null) for (let i = 0; i < added.length; i++) list.push(added[i]!)
    if (length !== null) list.push('content-length', length)
    return list
  }

  /** Whether header `lower` (a lowercase name) is set, in the shared object or the overlay. */
  #has(lower: string): boolean {
    if (Object.hasOwn(this.#own, lower)) return true
    const added = this.#added
    if (added === null) return false
    // Names are at the even places: a value that spells a name (vary: content-length) is not one.
    for (let i = 0; i < added.length; i += 2) if (added[i] === lower) return true
    return false
  }

  /** Builds a response from headers already lowercased (with* are on the hot path of middleware). */
  static #derive(
    status: number,
    own: HeaderMap,
    added: ReadonlyArray<string | string[]> | null,
    body: Body,
    view: FwResponse['view'],
  ): FwResponse {
    const response = new FwResponse(status, DERIVED, body, view)
    response.#own = own
    response.#added = added
    return response
  }

  /**
   * Whether the response has header `name` (any case), without merging its headers as
   * `headers` and `header()` do: for checks on the hot path.
   * @example
   * if (!response.hasHeader('cache-control')) response = response.withHeader('cache-control', 'no-store')
   */
  hasHeader(name: string): boolean {
    return this.#has(lowerName(name))
  }

  header(name: string): string | undefined {
    const headers = this.headers
    const lower = name.toLowerCase()
    // Own names only: header('constructor') was Object itself, a function typed as a string.
    const value = Object.hasOwn(headers, lower) ? headers[lower] : undefined
    return Array.isArray(value) ? value.join(', ') : value
  }
}

/** `headers` as a flat list, with `length` as their Content-Length (none when null). */
function withLength(headers: Readonly<HeaderMap>, length: string | null): (string | string[])[] {
  const list: (string | string[])[] = []
  for (const name in headers) if (name !== 'content-length') list.push(name, headers[name]!)
  if (length !== null) list.push('content-length', length)
  return list
}

/** Sets the (name, value, ...) pairs of `added` on `into`. */
function addAll(into: HeaderMap, added: ReadonlyArray<string | string[]>): HeaderMap {
  for (let i = 0; i < added.length; i += 2) into[added[i] as string] = added[i + 1]!
  return into
}

// Every async step of the pipeline resolves a promise with a response, and resolving looks up
// `then` on it (is it a thenable?). Found on the response's own prototype, as "not a function",
// the lookup stops there instead of searching Object.prototype: ~12 ns less per promise hop,
// of which a request through three async middleware makes eight.
Object.defineProperty(FwResponse.prototype, 'then', {
  value: undefined,
  writable: false,
  enumerable: false,
  configurable: false,
})

/**
 * JSON of `data` with `status`.
 * @example
 * return json({ id: 1 }, 201)
 */
export function json(data: unknown, status = 200, headers?: HeaderMap): FwResponse {
  const body = JSON.stringify(data) as string | undefined
  // A function (a getter not called) or a symbol has no JSON: `null` would be a 200 hiding the
  // slip, as for a handler that returns one (handlers.ts).
  if (body === undefined && (typeof data === 'function' || typeof data === 'symbol'))
    throw new TypeError(`json() cannot serialize a ${typeof data}`)
  return FwResponse.ofJson(status, body ?? 'null', headers)
}

/** Any body with status and headers (text/plain unless a content-type is given). */
export function create(body: BodyInput = '', status = 200, headers: HeaderMap = {}): FwResponse {
  const typed = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')
  return new FwResponse(
    status,
    // A 304 states no type of its own (see ofJson).
    typed || status === 304 ? headers : { 'content-type': 'text/plain; charset=utf-8', ...headers },
    typeof body === 'string' ? body : toBody(body, 'create()'),
  )
}

/** 204 No Content. */
export function noContent(headers: HeaderMap = {}): FwResponse {
  return new FwResponse(204, headers, null)
}

// The statuses that mean "go there" (RFC 9110 §15.4): 304 is a cache answer, 305/306 are
// retired. A redirect with any other status (a 200 with a Location) is a mistake, as in Symfony.
/**
 * The statuses `redirect()` takes.
 * @example
 * const status: RedirectStatus = permanent ? 308 : 307
 */
export type RedirectStatus = 300 | 301 | 302 | 303 | 307 | 308
const REDIRECT_STATUSES = new Set<number>([300, 301, 302, 303, 307, 308])
// What a Location may carry as it is: the characters of a URI (RFC 3986) but `\`, which
// browsers read as `/` (`/\evil.com` would leave the site), and `%` when it starts an escape.
// Anything else (spaces, non-ASCII, quotes) is percent-encoded as UTF-8, as Express's
// `res.location` does.
const NOT_URI = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5B\x5D\x5F\x61-\x7A\x7C\x7E]|%(?![0-9A-Fa-f]{2}))+/g

/**
 * A redirect (302 unless told otherwise: 300, 301, 302, 303, 307 or 308) to `url`, sent as
 * given but percent-encoded where a URI may not hold a character as it is (non-ASCII, spaces,
 * `\`). A URL with a control character (CR, LF, tab, NUL...), an empty one or another status is
 * a TypeError (a 500 when a handler makes it). The target is not checked otherwise: before
 * redirecting to one a client chose (`?next=`), check that it is a path of this site (starts
 * with one `/`, not `//`).
 * @example
 * return redirect('/login?next=%2Fhome', 303)
 */
export function redirect(
  url: string | URL,
  status: RedirectStatus = 302,
  headers: HeaderMap = {},
): FwResponse {
  const target = url instanceof URL ? url.href : url
  if (typeof target !== 'string' || target === '')
    throw new TypeError('redirect URL must not be empty')
  if (/[\x00-\x1f\x7f]/.test(target)) {
    throw new TypeError('redirect URL must not contain line breaks or control characters')
  }
  if (!REDIRECT_STATUSES.has(status))
    throw new TypeError(`redirect status ${status} is not 300-303, 307 or 308`)
  return new FwResponse(status, { location: encodeLocation(target), ...headers }, null)
}

function encodeLocation(url: string): string {
  try {
    return url.replace(NOT_URI, encodeURI)
  } catch {
    // encodeURI throws URIError on half a surrogate pair: no URL a client could follow.
    throw new TypeError('redirect URL is not well-formed Unicode')
  }
}

/**
 * A streamed body (sent with chunked transfer encoding): a Node `Readable`, a web
 * `ReadableStream` or an async iterable (an async generator) of strings or bytes.
 * @example
 * return stream(createReadStream('report.csv'), 200, { 'content-type': 'text/csv' })
 */
export function stream(
  body: Readable | ReadableStream | AsyncIterable<unknown>,
  status = 200,
  headers: HeaderMap = {},
): FwResponse {
  return new FwResponse(
    status,
    { 'content-type': 'application/octet-stream', ...headers },
    toBody(body, 'stream()'),
  )
}

/**
 * A view rendered by the kernel's view engine (HTML-escaping by default).
 * @example
 * return view('hello', { name: '<b>Ada</b>' }) // views/hello.html: <p>Hello {{ name }}</p>
 */
export function view(name: string, data: object = {}, status = 200): FwResponse {
  return new FwResponse(status, { 'content-type': 'text/html; charset=utf-8' }, null, {
    name,
    data: data as Record<string, unknown>,
  })
}

/**
 * `headers` set on `into` by lowercase name; never Transfer-Encoding, nor Content-Length when
 * `unframed`.
 */
function lowerKeys(headers: HeaderMap, into: HeaderMap, unframed = false): HeaderMap {
  for (const name in headers) {
    const lower = name.toLowerCase()
    if (!isFraming(lower) || (!unframed && lower !== TE)) into[lower] = headers[name]!
  }
  return into
}

/**
 * Whether fw frames a response with `body` itself: a string or bytes are sent with their own
 * Content-Length (wireHeaders). A caller's Content-Length or
 * Transfer-Encoding (headers copied from a proxied upstream response, say) is then dropped: sent
 * with a body of another length, the client would read the excess as the next response (response
 * splitting) or wait for bytes that never come. A stream keeps a declared length (a file's
 * size); the node adapter holds the stream to it. A caller's Transfer-Encoding is dropped from
 * every response: Node chunks a stream of unknown length itself, and another coding (`gzip`
 * alone, or beside a Content-Length) would leave the client no way to find the body's end.
 */
function sizedByFw(body: Body): boolean {
  return typeof body === 'string' || body instanceof Uint8Array
}

const TE = 'transfer-encoding'

function isFraming(lower: string): boolean {
  return lower === 'content-length' || lower === TE
}
