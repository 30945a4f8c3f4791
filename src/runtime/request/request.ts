/**
 * The request object (spec "Request object"): immutable, every `with*` returns a new instance.
 * The body is read by `loadBody()` (the kernel awaits it before the handler), never at
 * construction; accessors that need it throw until it is loaded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import type { RequestOptions } from '../types.js'
import { allAttributes, Attribute, attributeOf } from './attributes.js'
import { checkCreateArgs, contentSlot, createState, type CreateRequestInit } from './factory.js'
import type { BodyData } from './content.js'
import { parsedBodyPatch, paramsReader, uploadedFilesPatch, uriPatch } from './derive.js'
import * as h from './headers.js'
import { copyAt, select, valueAt } from './input.js'
import { InputMethods, mixInto } from './input-methods.js'
import { MethodChecks } from './method-checks.js'
import type { FileMap } from './multipart.js'
import { resolveOptions, type TrustFunction } from './options.js'
import { copyDeep, copyParams, type Params, type ParamsInit } from './params.js'
import { signalOf } from './signal.js'
import { effectiveMethod, nodeState, webState, type RequestState } from './state.js'
import * as uri from './uri.js'

/** Parsed once per state and shared by the copies `withAttribute` makes (it changes no header). */
interface Cache {
  trusted: boolean | null
  scheme: 'http' | 'https' | null
  authority: uri.Authority | null
}

// The input accessors and method checks come from InputMethods and MethodChecks, copied onto
// FwRequest's prototype (see mixInto below) rather than inherited: construction of a derived
// class went through V8's generic construct stub, ~150 instructions for each of the three
// requests a request makes.
export interface FwRequest extends InputMethods, MethodChecks {}

/**
 * An HTTP request.
 * @example
 * const request = FwRequest.fromNode(req, { limits: { body: 64 * 1024 } })
 * await request.loadBody()
 * const city = request.input('user.address.city', 'unknown')
 */
export class FwRequest {
  readonly #s: RequestState
  readonly #attributes: Attribute<FwRequest> | null
  readonly #cache: Cache

  private constructor(
    state: RequestState,
    attributes: Attribute<FwRequest> | null = null,
    cache: Cache = { trusted: null, scheme: null, authority: null },
  ) {
    this.#s = state
    this.#attributes = attributes
    this.#cache = cache
  }

  /**
   * From a node:http request. Reads nothing yet: call `loadBody()` before body accessors.
   * `beforeBody` runs once, just before the body is read (createListener sends "100 Continue" there).
   * `res`, its response, lets `getSignal()` see every client that leaves before the answer is sent.
   */
  static fromNode(
    req: IncomingMessage,
    options?: RequestOptions,
    beforeBody?: () => void,
    res?: ServerResponse,
  ): FwRequest {
    return new FwRequest(nodeState(req, resolveOptions(options), beforeBody, res))
  }

  /** From a WHATWG `Request`; `remoteAddress` is the peer (unset: no proxy is trusted). */
  static fromWeb(
    request: Request,
    options?: RequestOptions & { remoteAddress?: string },
  ): FwRequest {
    return new FwRequest(webState(request, resolveOptions(options), options?.remoteAddress))
  }

  /** The test factory: body loaded from the start (except raw multipart content). */
  static create(init: CreateRequestInit = {}, options?: RequestOptions): FwRequest {
    checkCreateArgs(init, options)
    return new FwRequest(createState(init, resolveOptions(options)))
  }

  /** Reads and parses the body once; 400/413/415 `HttpError`s on a bad body. */
  loadBody(): Promise<void> {
    return this.#s.body.load()
  }

  isBodyLoaded(): boolean {
    return this.#s.body.isLoaded()
  }

  /** Whether `cleanup()` has temp files to look after (false for requests without a body). */
  needsCleanup(): boolean {
    for (const slot of this.#s.slots) if (slot.needsCleanup()) return true
    return false
  }

  /** Removes uploaded temp files that were not moved (the kernel calls it after the response). */
  async cleanup(): Promise<void> {
    const slots = this.#s.slots.filter((slot) => slot.needsCleanup())
    if (slots.length > 0) await Promise.all(slots.map((slot) => slot.cleanup()))
  }

  /**
   * Hands `body`, a handler's streamed answer (a file's open descriptor), to `cleanup()`: a
   * middleware may still drop it after `next()` (it throws, or answers otherwise), and nothing
   * else would close it before garbage collection. A body sent and read to the end is left alone.
   */
  holdBody(body: Readable): void {
    this.#s.slots.push({
      needsCleanup: () => !body.readableEnded && !body.destroyed,
      cleanup: async () => {
        if (!body.readableEnded) body.destroy()
      },
    })
  }

  // --- Method ---------------------------------------------------------------------------------

  /** The method, after X-Http-Method-Override (honoured on POST only). */
  getMethod(): string {
    return effectiveMethod(this.#s)
  }

  /** The method on the wire, ignoring any override. */
  getOriginalMethod(): string {
    return this.#s.method
  }

  // --- URI and client -------------------------------------------------------------------------

  /**
   * `scheme://host[:port]/path?query`. The asterisk form (`OPTIONS *`) names no path (RFC 9112
   * §3.3: the URI is `scheme://host`), and a path given without its leading `/` (`withUri('x')`)
   * gets one: glued to the host, `.evil.com/x` would name another host.
   */
  getUri(): string {
    const query = this.getQueryString()
    const path = this.getPath()
    const shown = path.charCodeAt(0) === 47 ? path : path === '*' ? '' : `/${path}`
    return `${this.getSchemeAndHttpHost()}${shown}${query === '' ? '' : `?${query}`}`
  }

  getScheme(): 'http' | 'https' {
    return (this.#cache.scheme ??= uri.resolveScheme(
      this.#s.headers,
      this.#s.peer,
      this.isFromTrustedProxy(),
    ))
  }

  isSecure(): boolean {
    return this.getScheme() === 'https'
  }

  /** Lowercase host without port. */
  getHost(): string {
    return this.#authority().host
  }

  getPort(): number {
    return uri.effectivePort(this.#authority(), this.getScheme())
  }

  getSchemeAndHttpHost(): string {
    return uri.schemeAndHost(this.getScheme(), this.#authority())
  }

  /** The raw, still percent-encoded path. */
  getPath(): string {
    return uri.pathOf(this.#s.target)
  }

  /** The path below the base URL; fw has no front controller, so the same as `getPath()`. */
  getPathInfo(): string {
    return this.getPath()
  }

  getBaseUrl(): string {
    return ''
  }

  /** The raw query string without `?` ('' when none). */
  getQueryString(): string {
    return uri.splitTarget(this.#s.target).query
  }

  /** The socket peer address, `::ffff:1.2.3.4` written as `1.2.3.4` ('' when unknown). */
  getClientAddress(): string {
    return uri.unmapAddress(this.#s.peer.remoteAddress) ?? ''
  }

  /**
   * A signal aborted when the client leaves before the response was sent in full (never after a
   * complete one), its reason an `AbortError` DOMException; made on first call. A web Request's own
   * signal; `create()`'s `signal`, or one that never aborts. The copies `with*` makes share it.
   * @example
   * const upstream = await fetch(url, { signal: request.getSignal() })
   */
  getSignal(): AbortSignal {
    return signalOf(this.#s.source)
  }

  /** Whether the socket peer is a trusted proxy (so X-Forwarded-* headers count). */
  isFromTrustedProxy(): boolean {
    return (this.#cache.trusted ??= uri.isTrustedPeer(this.#s.peer, this.#s.options.trustProxy))
  }

  /** The proxy trust function in effect (for client-IP middleware walking X-Forwarded-For). */
  getTrustProxy(): TrustFunction {
    return this.#s.options.trustProxy
  }

  #authority(): uri.Authority {
    return (this.#cache.authority ??= uri.resolveAuthority(
      this.#s.headers,
      this.#s.peer,
      this.isFromTrustedProxy(),
      this.#s.origin ?? this.#s.target,
    ))
  }

  // --- Query, cookies, server, attributes ----------------------------------------------------

  /** All query params, a map of `keys` (null when missing), or one (dotted) key. */
  query(): Params
  query(keys: readonly string[]): Params
  query(key: string, fallback?: unknown): unknown
  query(key?: string | readonly string[], fallback: unknown = null): unknown {
    return select(this.#s.query(), key, fallback)
  }

  getQueryParams(): Params {
    return copyDeep(this.#s.query())
  }

  getCookieParams(): Params {
    return copyDeep(this.#s.cookies())
  }

  /**
   * The cookie named `key`. Cookie names often hold dots (`connect.sid`, `next-auth.session-token`),
   * so the name is looked up as it is first; a dotted path reads into nested values only when no
   * cookie has that name (values given by `withCookieParams`).
   */
  cookie(key: string, fallback: unknown = null): unknown {
    const cookies = this.#s.cookies()
    if (Object.hasOwn(cookies, key)) return copyDeep(cookies[key])
    return copyAt(cookies, key, fallback)
  }

  getServerParams(): Params {
    return copyParams(this.#s.server())
  }

  server(key: string, fallback: unknown = null): unknown {
    return valueAt(this.#s.server(), key, fallback)
  }

  getAttributes(): Record<string, unknown> {
    return allAttributes(this.#attributes, this.#s.attributes)
  }

  getAttribute<T = unknown>(name: string, fallback: T | null = null): T | null {
    return attributeOf(this.#attributes, this.#s.attributes, name, fallback)
  }

  // --- Headers --------------------------------------------------------------------------------

  getHeaders(): Record<string, string[]> {
    return h.headersToRecord(this.#s.headers)
  }

  hasHeader(name: string): boolean {
    return this.#s.headers.has(name.toLowerCase())
  }

  getHeader(name: string): string[] {
    return [...h.headerValues(this.#s.headers, name)]
  }

  /** The values of `name` joined with ', ' ('' when absent). */
  getHeaderLine(name: string): string {
    return h.headerLine(this.#s.headers, name)
  }

  protected bodyData(): BodyData {
    return this.#s.body.data
  }

  protected queryParams(): Params {
    return this.#s.query()
  }

  protected wireMethod(): string {
    return this.#s.method
  }

  // --- Derivation (PSR-7) ---------------------------------------------------------------------

  withMethod(method: string): FwRequest {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(method)) throw new TypeError('Invalid HTTP method')
    return this.#with({ method: method.toUpperCase() })
  }

  /** A copy for another URI (path?query or absolute). Query params are re-read from it. */
  withUri(target: string, preserveHost = false): FwRequest {
    // PSR-7: a missing or empty Host is updated from the URI even when preserving it.
    const keepHost = preserveHost && this.getHeaderLine('host') !== ''
    return this.#with(uriPatch(this.#s, target, keepHost))
  }

  /** A copy with `name` set to `value`; a finite number is written as its decimal string. */
  withHeader(name: string, value: h.HeaderValue): FwRequest {
    return this.#withHeaders(h.withHeader(this.#s.headers, name, value))
  }

  withAddedHeader(name: string, value: h.HeaderValue): FwRequest {
    return this.#withHeaders(h.withAddedHeader(this.#s.headers, name, value))
  }

  withoutHeader(name: string): FwRequest {
    return this.#withHeaders(h.withoutHeader(this.#s.headers, name))
  }

  /** A copy whose raw content is `content`, parsed again by the Content-Type, within the limits. */
  withBody(content: string | Buffer): FwRequest {
    const slot = contentSlot(Buffer.from(content), this.#s.headers, this.#s.options)
    this.#s.slots.push(slot)
    return this.#with({ body: slot })
  }

  /**
   * A copy whose parsed body (what `input()`/`post()` read) is `data`; with null, a copy without
   * one (PSR-7: `getParsedBody()` is then null, and `input()` empty).
   */
  withParsedBody(data: ParamsInit | unknown[] | null): FwRequest {
    return this.#with(parsedBodyPatch(this.#s, data))
  }

  withUploadedFiles(files: FileMap): FwRequest {
    return this.#with(uploadedFilesPatch(this.#s, files))
  }

  withQueryParams(params: ParamsInit): FwRequest {
    return this.#with({ query: paramsReader(params) })
  }

  withCookieParams(cookies: ParamsInit): FwRequest {
    return this.#with({ cookies: paramsReader(cookies) })
  }

  withAttribute(name: string, value: unknown): FwRequest {
    return new FwRequest(this.#s, new Attribute(name, value, false, this.#attributes), this.#cache)
  }

  /**
   * A copy with several attributes set, in the object's key order (one copy, not one per key).
   * `computed` ones are computed on first read, at most once, from this request (for values most
   * requests never read, such as a generated trace id); a constant object of functions costs
   * nothing per request.
   * @example
   * request.withAttributes({ tenant: 'acme' }, { agent: (r) => r.getHeaderLine('user-agent').toLowerCase() })
   */
  withAttributes(
    attributes: Readonly<Record<string, unknown>>,
    computed?: Readonly<Record<string, (request: FwRequest) => unknown>>,
  ): FwRequest {
    let chain = this.#attributes
    for (const name in attributes) chain = new Attribute(name, attributes[name], false, chain)
    if (computed !== undefined) {
      for (const name in computed) chain = new Attribute(name, this, false, chain, computed[name]!)
    }
    return new FwRequest(this.#s, chain, this.#cache)
  }

  withoutAttribute(name: string): FwRequest {
    return new FwRequest(
      this.#s,
      new Attribute(name, undefined, true, this.#attributes),
      this.#cache,
    )
  }

  /**
   * A copy with other headers, its in-process content (`withBody`, `create()`'s body) parsed by
   * their Content-Type when that changed.
   */
  #withHeaders(headers: h.HeaderBag): FwRequest {
    const body = this.#s.body.forHeaders(headers)
    if (body === this.#s.body) return this.#with({ headers })
    this.#s.slots.push(body)
    return this.#with({ headers, body })
  }

  /** A copy with other state: the attributes carry over, parsed caches do not. */
  #with(patch: Partial<RequestState>): FwRequest {
    return new FwRequest({ ...this.#s, ...patch }, this.#attributes)
  }
}

mixInto(FwRequest, InputMethods, MethodChecks)
