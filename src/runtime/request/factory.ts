/** State for requests built in process: the test factory `create()` and `withBody()`. */
import { Readable } from 'node:stream'
import { BodySlot } from './body.js'
import { bodyKind, contentBody, emptyBody, type BodyData } from './content.js'
import {
  firstHeader,
  headersFromRecord,
  withHeader,
  type HeaderBag,
  type HeaderInit,
} from './headers.js'
import type { FileMap } from './multipart.js'
import { checkRequestOptions, type ResolvedOptions } from './options.js'
import type { RequestOptions } from '../types.js'
import { checkOptions, optionNames } from '../../shared/option-names.js'
import { copyDeep, emptyParams, type Params, type ParamsInit } from './params.js'
import { buildQuery, parseParams } from './query.js'
import { tooLarge } from './read-body.js'
import { assemble, serverParams, type RequestState } from './state.js'
import { isAbsoluteForm, originOf, splitTarget, type Peer } from './uri.js'

/** What `FwRequest.create()` accepts; everything is optional. */
export interface CreateRequestInit {
  /** Default GET. */
  method?: string
  /**
   * A path with query (`/users?page=2`) or an absolute URL, whose scheme, host and port win over
   * a Host header (as an absolute-form target's do), and which gives Host when there is none.
   */
  uri?: string
  /** Merged over the URI's query string. */
  query?: ParamsInit
  /** The parsed body (form data), as PSR-7's parsed body; an object typed with an interface too. */
  post?: ParamsInit
  headers?: HeaderInit
  cookies?: ParamsInit
  files?: FileMap
  /** Overrides of server params; REMOTE_ADDR (default 127.0.0.1) is also the peer address. */
  server?: Record<string, string | number>
  /**
   * Raw content, parsed by the Content-Type header (multipart needs `await loadBody()`), under
   * the same limits as a body off the wire. Absent, the request has no body (an empty form for a
   * multipart type); present but empty, multipart content lacks its closing boundary (400).
   */
  body?: string | Buffer
  attributes?: Record<string, unknown>
  /** What `getSignal()` returns; by default a signal that never aborts (the client never leaves). */
  signal?: AbortSignal
}

const INIT_NAMES = optionNames<CreateRequestInit>({
  method: 1,
  uri: 1,
  query: 1,
  post: 1,
  headers: 1,
  cookies: 1,
  files: 1,
  server: 1,
  body: 1,
  attributes: 1,
  signal: 1,
})

/**
 * Refuses a name `create()` would ignore, in its init or its options (`header:` for `headers:`
 * built a request without them, and the test passed or failed for another reason).
 * @example
 * checkCreateArgs({ uri: '/', header: { accept: 'text/html' } }) // TypeError: ... did you mean `headers`?
 */
export function checkCreateArgs(
  init: CreateRequestInit,
  options: RequestOptions | undefined,
): void {
  checkOptions('FwRequest.create()', init, INIT_NAMES)
  checkRequestOptions('FwRequest.create() options', options)
}

/**
 * State for a request made in process. Its body is loaded from the start (except multipart content).
 * @example
 * createState({ method: 'POST', uri: '/users', post: { name: 'Ada' } }, resolveOptions(undefined))
 */
export function createState(init: CreateRequestInit, options: ResolvedOptions): RequestState {
  const uri = init.uri ?? '/'
  const url = isAbsoluteForm(uri) ? new URL(uri) : null
  let headers = headersFromRecord(init.headers ?? {})
  if (!headers.has('host')) headers = withHeader(headers, 'host', url?.host || 'localhost')
  const { path, query: queryString } = splitTarget(uri)
  const query = parseParams(queryString, options.limits)
  if (init.query) Object.assign(query, copyDeep(init.query))
  const search = init.query ? buildQuery(query) : queryString
  const target = search === '' ? path : `${path}?${search}`
  const method = (init.method ?? 'GET').toUpperCase()
  const peer = createPeer(init, url)
  const base = { method, target, headers, peer, protocol: 'HTTP/1.1', time: Date.now() }
  const server = (): Params => Object.assign(serverParams(base), init.server)
  const origin = url ? originOf(url) : undefined
  return assemble({
    ...{ method, target, origin, headers, peer, options, server, query },
    source: signalFor(init.signal),
    body: createSlot(init, headers, options),
    ...(init.cookies ? { cookies: Object.assign(emptyParams(), copyDeep(init.cookies)) } : {}),
    attributes: new Map(Object.entries(init.attributes ?? {})),
  })
}

function signalFor(signal: unknown): AbortSignal {
  if (signal === undefined) return new AbortController().signal
  if (signal instanceof AbortSignal) return signal
  throw new TypeError('FwRequest.create(): `signal` must be an AbortSignal')
}

function createPeer(init: CreateRequestInit, url: URL | null): Peer {
  return {
    remoteAddress: String(init.server?.REMOTE_ADDR ?? '127.0.0.1'),
    remotePort: undefined,
    encrypted: url?.protocol === 'https:' || init.server?.HTTPS === 'on',
    localAddress: undefined,
    localPort: undefined,
  }
}

function createSlot(
  init: CreateRequestInit,
  headers: HeaderBag,
  options: ResolvedOptions,
): BodySlot {
  const raw = init.body === undefined ? null : Buffer.from(init.body)
  const slot = contentSlot(raw, headers, options)
  const post = init.post ? Object.assign(emptyParams(), copyDeep(init.post)) : null
  const patch: Partial<BodyData> = {
    ...(post ? { kind: 'form', value: constant(post) } : {}),
    ...(init.files ? { files: Object.assign(emptyParams(), init.files) as FileMap } : {}),
  }
  return Object.keys(patch).length === 0 ? slot : BodySlot.overlay(slot, () => patch)
}

function constant<T>(value: T): () => T {
  return () => value
}

/**
 * A slot holding `raw` content (null: no body), interpreted by the Content-Type in `headers`
 * (and again by the request's own when a copy changes it: BodySlot.forHeaders), under the limits
 * a body read off the wire has. JSON and urlencoded content parse lazily on first read;
 * multipart content is parsed by `load()`, as it would be from the wire.
 */
export function contentSlot(
  raw: Buffer | null,
  headers: HeaderBag,
  options: ResolvedOptions,
): BodySlot {
  if (raw === null) return BodySlot.loaded(emptyBody())
  return BodySlot.content(firstHeader(headers, 'content-type'), (type) =>
    typedSlot(raw, type, options),
  )
}

/** A slot holding `raw` content of the Content-Type `contentType`. */
function typedSlot(
  raw: Buffer,
  contentType: string | undefined,
  options: ResolvedOptions,
): BodySlot {
  const kind = bodyKind(contentType)
  if (kind !== 'multipart') {
    const { limits } = options
    if (raw.length > limits.body) return BodySlot.failed(tooLarge(limits.body))
    return BodySlot.loaded(contentBody(raw, kind, limits))
  }
  return BodySlot.fromWire({
    open: () => Readable.from([raw]),
    contentType,
    contentEncoding: undefined,
    contentLength: String(raw.length),
    limits: options.limits,
    uploadDir: options.uploadDir,
  })
}
