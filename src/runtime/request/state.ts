/**
 * The immutable state behind an `FwRequest`, and how each constructor builds it. Derived data
 * (query, cookies, server params) is computed on first use: most handlers never read all of it,
 * and `fromNode` is on the hot path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { BodySlot } from './body.js'
import { bodyKind, emptyBody } from './content.js'
import { parseCookies } from './cookies.js'
import {
  firstOf,
  headersFromDistinct,
  headersFromRaw,
  headersFromWeb,
  lineOf,
  valuesOf,
  withHeader,
  type HeaderBag,
} from './headers.js'
import type { ResolvedOptions } from './options.js'
import { emptyParams, type Params } from './params.js'
import { parseParams } from './query.js'
import { webSignal, type SignalSource } from './signal.js'
import { originOf, splitTarget, type Peer } from './uri.js'

export interface RequestState {
  /** The method on the wire, uppercase (the override is applied by `getMethod()`). */
  readonly method: string
  /** Raw request target: path and query, never decoded. */
  readonly target: string
  /**
   * `scheme://host[:port]` of the absolute URL a request was made for when `target` is a path
   * (a web Request's URL, `create()`'s absolute `uri`): it names the host before Host, as an
   * absolute-form target does (RFC 9112 §3.2.2). Undefined from Node, whose target says it.
   */
  readonly origin: string | undefined
  readonly headers: HeaderBag
  readonly query: () => Params
  readonly cookies: () => Params
  readonly server: () => Params
  readonly attributes: ReadonlyMap<string, unknown>
  readonly peer: Peer
  readonly body: BodySlot
  /**
   * What `cleanup()` looks after, shared by all instances derived from one request: every body
   * slot that may own temp files, and the streamed bodies the handler answered with.
   */
  readonly slots: Cleanup[]
  readonly options: ResolvedOptions
  /** What `getSignal()` follows (signal.ts): only read there, on first use. */
  readonly source: SignalSource
}

/** Something a request must release once it is answered. */
export interface Cleanup {
  needsCleanup(): boolean
  cleanup(): Promise<void>
}

// What a POST may become: a method a route can have, but never a safe one (GET, HEAD).
const OVERRIDES = new Set(['PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * The method after X-Http-Method-Override: only on POST, and only to PUT, PATCH, DELETE or
 * OPTIONS (any case). Another value (an unknown method, a safe one) or the header sent twice,
 * which one to trust being unclear, leaves the POST a POST.
 */
export function effectiveMethod(state: RequestState): string {
  if (state.method !== 'POST') return state.method
  const method = lineOf(state.headers, 'x-http-method-override').trim().toUpperCase()
  return OVERRIDES.has(method) ? method : state.method
}

// Constructor attributes are only ever read (later ones live on FwRequest's chain): share one.
const NO_ATTRIBUTES: ReadonlyMap<string, unknown> = new Map()

// A loaded empty slot never changes (nothing to load, nothing to clean up): all share one.
const NO_BODY = BodySlot.loaded(emptyBody())

/**
 * State of a Node request. This is the hot path: no parsing happens here.
 * @example
 * const state = nodeState(req, resolveOptions(options))
 *
 * `beforeBody` runs once, when the body is about to be read (a server answering "Expect:
 * 100-continue" itself sends the 100 there, so requests refused before that never upload).
 * `res`, the response, is only kept: `getSignal()` reads whether it was sent in full.
 */
export function nodeState(
  req: IncomingMessage,
  options: ResolvedOptions,
  beforeBody?: () => void,
  res?: ServerResponse,
): RequestState {
  const peer = new SocketPeer(req.socket)
  const headers = headersFromNode(req)
  // Node's parser gives the method uppercase (no copy then); other callers may not.
  const wire = req.method ?? 'GET'
  const method = isUpperCase(wire) ? wire : wire.toUpperCase()
  const target = req.url ?? '/'
  const time = Date.now()
  return assemble({
    method,
    target,
    headers,
    peer,
    options,
    source: res ?? req,
    server: () =>
      serverParams({ method, target, headers, peer, protocol: `HTTP/${req.httpVersion}`, time }),
    // Most requests carry no body: their slot is loaded (empty) from the start, so loadBody()
    // and cleanup() cost nothing on them.
    body:
      hasBody(headers) || (req.httpVersionMajor === 2 && http2Body(req, headers))
        ? wireSlot(headers, options, () => req, beforeBody)
        : NO_BODY,
  })
}

// A keep-alive connection carries many requests from one address: read it from the socket
// (a getter chain into the handle) once per connection, not once per request.
const REMOTE_ADDRESSES = new WeakMap<Socket, string>()

/**
 * The peer of a Node socket, each part read when asked: a request that never consults proxy
 * trust or server params never touches the socket.
 */
class SocketPeer implements Peer {
  readonly encrypted: boolean
  readonly #socket: Socket

  constructor(socket: Socket) {
    this.#socket = socket
    this.encrypted = (socket as Partial<TLSSocket>).encrypted === true
  }

  get remoteAddress(): string | undefined {
    let address = REMOTE_ADDRESSES.get(this.#socket)
    if (address === undefined) {
      address = this.#socket.remoteAddress
      if (address !== undefined) REMOTE_ADDRESSES.set(this.#socket, address)
    }
    return address
  }

  get remotePort(): number | undefined {
    return this.#socket.remotePort
  }

  get localAddress(): string | undefined {
    return this.#socket.localAddress
  }

  get localPort(): number | undefined {
    return this.#socket.localPort
  }

  /**
   * Whether the server listens on a Unix domain socket. Read from the server, not the socket: a
   * TCP socket closed early has no address either, and must not pass for one (it would be trusted).
   */
  get unixSocket(): boolean {
    const server = (this.#socket as { server?: { address?: () => unknown } | null }).server
    // A path (also once closed, while in-flight requests drain); an object for TCP.
    return typeof server?.address?.() === 'string'
  }
}

function isUpperCase(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 97 && c <= 122) return false
  }
  return true
}

function headersFromNode(req: IncomingMessage): HeaderBag {
  // Test doubles may only have headersDistinct; real requests always have rawHeaders.
  if (Array.isArray(req.rawHeaders))
    return headersFromRaw(req.httpVersionMajor === 2 ? http2Fields(req.rawHeaders) : req.rawHeaders)
  return headersFromDistinct(req.headersDistinct as Record<string, string[] | undefined>)
}

/**
 * The header fields of an HTTP/2 request (node:http2's compatibility API): its pseudo-header
 * fields (`:method`, `:path`…) are none, and its host is `:authority`, which clients send instead
 * of Host (RFC 9113 §8.3.1). Without it, every request was taken for one addressed to the
 * server's own address: no domain route matched, and getUri() and the HTTPS redirect named it.
 * A Host that names another host as well is two hosts: the 400 of a Host sent twice.
 */
function http2Fields(raw: readonly string[]): string[] {
  const fields: string[] = []
  let authority: string | undefined
  let host: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.charCodeAt(0) === 58) {
      if (name === ':authority') authority = raw[i + 1]
      continue
    }
    if (host === undefined && name.toLowerCase() === 'host') host = raw[i + 1]
    fields.push(name, raw[i + 1]!)
  }
  if (authority !== undefined && authority.toLowerCase() !== host?.toLowerCase())
    fields.push('host', authority)
  return fields
}

/**
 * Whether an HTTP/2 request has a body: unless its HEADERS frame ended the stream. HTTP/2 frames
 * a body itself, so a client may send one without Content-Length (node's client, a streamed
 * fetch()): read by the HTTP/1.1 rule (no Content-Length, no Transfer-Encoding: no body), it was
 * silently taken for an empty one.
 */
function http2Body(req: IncomingMessage, headers: HeaderBag): boolean {
  // A declared length says it, as in HTTP/1.1 (hasBody).
  if (firstOf(headers, 'content-length') !== undefined) return false
  const stream = (req as { stream?: { endAfterHeaders?: unknown } }).stream
  return stream?.endAfterHeaders === false
}

/** State of a WHATWG Request; its body stream is wrapped only when loading. */
export function webState(
  request: Request,
  options: ResolvedOptions,
  remoteAddress: string | undefined,
): RequestState {
  const url = new URL(request.url)
  let headers = headersFromWeb(request.headers)
  // A Request built by hand often has no Host header: its URL says where it was sent.
  if (!headers.has('host')) headers = withHeader(headers, 'host', url.host)
  const peer: Peer = {
    remoteAddress,
    remotePort: undefined,
    encrypted: url.protocol === 'https:',
    localAddress: undefined,
    localPort: undefined,
  }
  const method = request.method.toUpperCase()
  const target = rawTarget(request.url)
  const base = { protocol: 'HTTP/1.1', time: Date.now() }
  const open = (): Readable | null =>
    request.body === null ? null : Readable.fromWeb(request.body as WebReadableStream)
  return assemble({
    method,
    target,
    origin: originOf(url),
    headers,
    peer,
    options,
    source: webSignal(request.signal),
    server: () => serverParams({ method, target, headers, peer, ...base }),
    body: wireSlot(headers, options, open),
  })
}

/**
 * The path and query of an absolute URL string as written: no dot segments removed, no escapes
 * changed, as `req.url` gives them to fromNode (routing must see the same path). A `Request` made
 * by `new Request(url)` has normalised its URL already; a host that keeps the raw target gives it.
 */
function rawTarget(url: string): string {
  const { path, query } = splitTarget(url)
  return query === '' ? path : `${path}?${query}`
}

export interface Parts {
  method: string
  target: string
  origin?: string
  headers: HeaderBag
  peer: Peer
  options: ResolvedOptions
  source: SignalSource
  server: () => Params
  body: BodySlot
  query?: Params
  cookies?: Params
  attributes?: ReadonlyMap<string, unknown>
}

/**
 * Fills the lazily derived parts and registers the body slot for cleanup. Query, cookies and
 * server params are computed on first use and kept in this one scope (no wrapper per part: this
 * runs for every request); parsing is deterministic, so a parse that threw throws again.
 */
export function assemble(parts: Parts): RequestState {
  const { headers, options, target } = parts
  let query = parts.query ?? null
  let cookies = parts.cookies ?? null
  let server: Params | null = null
  return {
    method: parts.method,
    target,
    origin: parts.origin,
    headers,
    peer: parts.peer,
    options,
    source: parts.source,
    body: parts.body,
    slots: [parts.body],
    attributes: parts.attributes ?? NO_ATTRIBUTES,
    server: () => (server ??= parts.server()),
    query: () => (query ??= parseParams(splitTarget(target).query, options.limits)),
    cookies: () => (cookies ??= parseCookies(valuesOf(headers, 'cookie').join('; '))),
  }
}

function wireSlot(
  headers: HeaderBag,
  options: ResolvedOptions,
  open: () => Readable | null,
  askForBody?: () => void,
): BodySlot {
  return BodySlot.fromWire({
    open,
    askForBody,
    contentType: firstOf(headers, 'content-type'),
    contentEncoding: lineOf(headers, 'content-encoding') || undefined,
    contentLength: firstOf(headers, 'content-length'),
    limits: options.limits,
    uploadDir: options.uploadDir,
  })
}

/**
 * Whether the message has a body to read (RFC 9112 §6.3). Without Content-Length or
 * Transfer-Encoding it has none, for any method and type: an empty body. A declared empty body
 * reads as empty too, except multipart content, which then lacks its closing boundary (400).
 * Most requests (GET) have neither header: two look-ups, no Content-Type (hot path).
 */
function hasBody(headers: HeaderBag): boolean {
  if (firstOf(headers, 'transfer-encoding') !== undefined) return true
  const length = firstOf(headers, 'content-length')
  if (length === undefined) return false
  return length !== '0' || bodyKind(firstOf(headers, 'content-type')) === 'multipart'
}

interface ServerBase {
  method: string
  target: string
  headers: HeaderBag
  peer: Peer
  protocol: string
  time: number
}

/** PHP-style `$_SERVER`: REMOTE_ADDR, REQUEST_URI, ..., and HTTP_* for every header. */
export function serverParams(base: ServerBase): Params {
  const { peer } = base
  const server = emptyParams()
  const set = (name: string, value: string | number | undefined): void => {
    if (value !== undefined) server[name] = value
  }
  set('REMOTE_ADDR', peer.remoteAddress)
  set('REMOTE_PORT', peer.remotePort?.toString())
  set('SERVER_ADDR', peer.localAddress)
  set('SERVER_PORT', peer.localPort?.toString())
  set('SERVER_PROTOCOL', base.protocol)
  set('REQUEST_METHOD', base.method)
  set('REQUEST_URI', base.target)
  set('QUERY_STRING', splitTarget(base.target).query)
  if (peer.encrypted) set('HTTPS', 'on')
  set('REQUEST_TIME', Math.floor(base.time / 1000))
  set('REQUEST_TIME_FLOAT', base.time / 1000)
  for (const { name, values } of base.headers.values()) {
    const key = name.toUpperCase().replaceAll('-', '_')
    // PHP names these two without the HTTP_ prefix.
    const isContent = key === 'CONTENT_TYPE' || key === 'CONTENT_LENGTH'
    set(isContent ? key : `HTTP_${key}`, values.join(', '))
  }
  return server
}
