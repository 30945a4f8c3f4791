/**
 * Writing a response to node:http: in-memory bodies with one writeHead and one end, streams piped
 * with their headers sent on the first chunk (so a body that fails before it is still answered by
 * the error boundary), held to their Content-Length, cut when the client stops reading; and the
 * plain 500 when Node refuses what fw wrote.
 */
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { pipeline, Transform, type Readable } from 'node:stream'
import { asksIfFresh, notModifiedFor } from './file-conditions.js'
import { isDestroyed, onceGone } from './gone.js'
import type { Kernel } from './kernel.js'
import { safeRequestId } from './middleware/request-id.js'
import type { FwRequest } from './request/request.js'
import { isClientGone } from './request/signal.js'
import { FwResponse } from './response.js'
import { withVary } from './vary.js'
import { jsonErrorHeaders } from './wire-errors.js'

/** Closes a stream body that will not be sent (a file's descriptor would wait for the GC). */
export function discardBody(response: FwResponse): void {
  const body = response.body as { destroy?: unknown } | null | undefined
  if (typeof body === 'object' && body !== null && typeof body.destroy === 'function')
    (body as Readable).destroy()
}

const FAILURE_REASON = 'Internal Server Error'

/**
 * The 500 for a response Node refused to write, with the error boundary's headers. A refused
 * writeHead() leaves state behind (the first status message, the first Content-Length, no body
 * for a 204): the reason, Content-Length and body are therefore given explicitly, so that the
 * next response on a keep-alive connection starts where the client expects it. A response
 * already (partly) sent can only be cut off.
 */
export function answerFailure(
  error: unknown,
  res: ServerResponse,
  id: string | undefined,
  kernel: Kernel,
  message: string,
): void {
  const requestId = safeRequestId(id)
  kernel.log.error({ err: error, request_id: requestId }, message)
  try {
    if (res.headersSent || isDestroyed(res)) {
      cutShort(res)
      return
    }
    const body = JSON.stringify({ error: FAILURE_REASON, code: 500, request_id: requestId })
    const headers = jsonErrorHeaders(body)
    if (requestId !== undefined) headers['x-request-id'] = requestId
    for (const name of res.getHeaderNames()) res.removeHeader(name)
    const state = res as ServerResponse & { _hasBody: boolean }
    res.chunkedEncoding = false
    state._hasBody = res.req.method !== 'HEAD'
    // HTTP/2 has no reason phrase (Node warns about one).
    if (res.req.httpVersionMajor === 2) res.writeHead(500, headers)
    else res.writeHead(500, FAILURE_REASON, headers)
    res.end(body)
  } catch (failure) {
    kernel.log.error({ err: failure }, 'The 500 answer could not be written either')
    res.destroy()
  }
}

/**
 * Ends the connection of a response sent in part, so that its client sees the body is incomplete.
 * A body without chunked encoding (the answer to an HTTP/1.0 request, as nginx proxies by
 * default) may end with the connection: closed as usual, a body cut short looked complete, and a
 * proxy passed it on (and cached it) as such. The connection is reset instead. A chunked body
 * without its last chunk is told by a plain close.
 */
function cutShort(res: ServerResponse): void {
  const socket = res.socket
  if (
    socket !== null &&
    !socket.destroyed &&
    res.req.httpVersionMajor === 1 &&
    !res.chunkedEncoding
  )
    try {
      // TCP only: a TLS or Unix domain socket throws (ERR_INVALID_HANDLE_TYPE), and gets the
      // plain close (README: a Content-Length, or HTTP/1.1 to the proxy, tells it apart).
      socket.resetAndDestroy()
    } catch {}
  res.destroy()
}

/** Headers as writeHead takes them: an object, or a flat (name, value, ...) list. */
type NodeHeaders = Record<string, string | string[]> | (string | string[])[]

/**
 * A 204, 205 or 304 as sent: without its body. RFC 9110 §15.3.6 forbids content in a 205, and
 * Node, which drops a 204's or 304's, writes a 205's (its Content-Length becomes 0). A stream is
 * closed unread: Node ignores each write to a 204 or 304 at once, so piped it was read to its end
 * for nothing, and an endless in-memory one never let the event loop run again.
 */
function withoutBody(response: FwResponse): FwResponse {
  discardBody(response)
  return new FwResponse(response.status, response.headers, null)
}

/** Whether `response` carries what a client's copy is revalidated by (RFC 9110 §8.8). */
function hasValidator(response: FwResponse): boolean {
  return (
    FwResponse.hasLowerHeader(response, 'etag') ||
    FwResponse.hasLowerHeader(response, 'last-modified')
  )
}

/** `response`, or the 304 that stands for it (its streamed body closed unread). */
function revalidated(response: FwResponse, request: FwRequest): FwResponse {
  const notModified = notModifiedFor(response, request)
  if (notModified === null) return response
  discardBody(response)
  return notModified
}

/**
 * Writes a response. Hot path: keep it to one writeHead and one end for in-memory bodies.
 * `rescuing`: the response is the error boundary's answer to a streamed body that failed.
 */
export function send(
  res: ServerResponse,
  answer: FwResponse,
  request: FwRequest,
  kernel: Kernel,
  rescuing = false,
): void {
  const status = answer.status
  let response =
    answer.body !== null && (status === 205 || !hasContent(status)) ? withoutBody(answer) : answer
  // A client revalidating its copy: a 200 with an ETag or Last-Modified becomes a 304 when that
  // copy is fresh. Hot path: a response without either pays two name checks.
  if (status === 200 && !rescuing && hasValidator(response) && asksIfFresh(res.req.rawHeaders))
    response = revalidated(response, request)
  const body = response.body
  // Everything goes into writeHead, Content-Length included: a setHeader() before it would send
  // Node down its slow path (every header re-validated and stored one by one).
  const wire = FwResponse.wireHeaders(response) as NodeHeaders
  const headers = res.req.httpVersionMajor === 2 ? withoutConnectionFields(wire) : wire
  if (body === null || typeof body === 'string' || body instanceof Uint8Array) {
    res.writeHead(response.status, headers)
    res.end(body ?? undefined)
    // Bytes the socket did not take at once (a large body): the client has to read them.
    if (!res.writableFinished) closeWhenStalled(res, response, kernel)
    return
  }
  sendStream(res, body, response, headers, request, kernel, rescuing)
}

/**
 * Closes the connection of `res` once its client has taken none of the response's bytes for the
 * kernel's `sendTimeoutMs` (nginx's send_timeout): a client that stops reading (a slow-read
 * attack) held the connection, the unsent bytes and a file's descriptor for ever. Progress is what
 * the socket hands to the kernel, so a client that reads slowly is not cut, and one that sends
 * bytes (a request line a second) while reading none is: a socket's own timeout, which Node
 * offers, restarts on every byte received too. Nothing waiting to be sent is a stream that is only
 * quiet (server-sent events between two events), which leaves the connection open.
 */
function closeWhenStalled(res: ServerResponse, response: FwResponse, kernel: Kernel): void {
  const ms = kernel.sendTimeoutMs
  if (ms === 0) return
  // Queued behind a pipelined response: guarded once its turn comes (its socket assigned). A
  // timer started now ran for ever when the client left before that turn (no 'finish' or
  // 'close' comes then), and kept the response and its body.
  if (res.socket === null) {
    res.once('socket', () => guardSending(res, response, kernel, ms))
    return
  }
  guardSending(res, response, kernel, ms)
}

function guardSending(res: ServerResponse, response: FwResponse, kernel: Kernel, ms: number): void {
  // TLS (node:https) counts its queue in encrypted bytes that move only when a whole write is
  // done: there the socket's own timeout is the guard, as it was everywhere.
  const socket = res.socket ?? res.req.socket
  if ((socket as TLSSocket).encrypted === true || bytesTaken(socket) === null)
    return closeWhenIdle(res, response, kernel, ms)
  if (isDestroyed(res) || res.writableFinished) return
  let taken = -1
  let since = performance.now()
  const check = (): void => {
    const socket = res.socket
    if (socket === null || isDestroyed(res)) return stop()
    const now = bytesTaken(socket)
    if (now === null) return
    if (now !== taken || res.writableLength === 0) {
      taken = now
      since = performance.now()
      return
    }
    if (performance.now() - since < ms) return
    cutStalled(res, response, kernel, ms)
  }
  const timer = setInterval(check, Math.max(Math.ceil(ms / 4), 10))
  timer.unref()
  const stop = (): void => clearInterval(timer)
  res.once('finish', stop)
  res.once('close', stop)
}

/**
 * The socket's idle timeout as the guard: Node restarts it whenever a write completes, and also
 * whenever the client sends a byte.
 */
function closeWhenIdle(
  res: ServerResponse,
  response: FwResponse,
  kernel: Kernel,
  ms: number,
): void {
  res.setTimeout(ms, () => {
    if (res.writableLength === 0 || isDestroyed(res)) return
    cutStalled(res, response, kernel, ms)
  })
  // Sent, the response leaves the socket's timeout to Node: kept, it closed the connection, with
  // no word, under a later response on it (a pipelined request whose handler took longer). This
  // runs before Node's own 'finish' listener, which then sets the keep-alive timeout. Over
  // HTTP/2 the timeout was the stream's, and res.socket.setTimeout the whole session's.
  if (res.req.httpVersionMajor !== 2)
    res.prependOnceListener('finish', () => res.socket?.setTimeout(0))
}

function cutStalled(res: ServerResponse, response: FwResponse, kernel: Kernel, ms: number): void {
  kernel.log.warn(
    { request_id: response.header('x-request-id'), unsent: res.writableLength },
    `The client took none of the response for ${ms} ms: connection closed`,
  )
  res.destroy()
}

/**
 * The bytes of `socket`'s writes the kernel has taken: those handed to libuv less those it still
 * queues. Node keeps both (the `bytesWritten` getter counts the queued too); null elsewhere.
 */
function bytesTaken(socket: Socket): number | null {
  const own = socket as unknown as {
    _bytesDispatched?: unknown
    _handle?: { writeQueueSize?: unknown } | null
  }
  const dispatched = own._bytesDispatched
  const queued = own._handle?.writeQueueSize
  return typeof dispatched === 'number' && typeof queued === 'number' ? dispatched - queued : null
}

/**
 * Streams `body`. The status line and headers go out with its first chunk (setHeader, not
 * writeHead), so a body that fails before producing anything, such as a file that cannot be
 * opened, is still answered by the error boundary (as Fastify does) instead of by a 200 cut
 * short. A failure after the first chunk can only end the connection, which tells the client
 * that the body is incomplete, as does a body that does not match the Content-Length it
 * declares. A client that goes away stops the reading (a file stays open otherwise).
 */
function sendStream(
  res: ServerResponse,
  body: Readable,
  response: FwResponse,
  headers: NodeHeaders,
  request: FwRequest,
  kernel: Kernel,
  rescuing: boolean,
): void {
  // The client left before the answer was ready: nothing will read the body, and a 'close'
  // listener added now would never fire. Piped into the closed response, a file's stream stayed
  // paused with its descriptor open until garbage collection (one per aborted download).
  if (isDestroyed(res) || res.req.socket.destroyed) {
    body.destroy()
    return
  }
  // A stream already read to its end (a response kept in a variable and returned again, a
  // module's stream) would send an empty 200 without a word: a stream can be sent once.
  if (body.readableEnded) {
    const error = new Error('The streamed body was already read to its end: a stream is sent once')
    return streamFailure(res, body, response, request, kernel, rescuing)(error)
  }
  setStreamHead(res, response.status, headers)
  // HEAD sends the headers only: reading a whole file to discard it would be wasted work. Before
  // bytesOnly, whose pipeline starts reading at once: a generator ran its first step (a database
  // query) for a HEAD, to be thrown away.
  if (res.req.method === 'HEAD') {
    body.destroy()
    res.end()
    return
  }
  // Chunks of an object-mode stream (Readable.from, an async generator) may be what a socket
  // cannot take: res.write would throw inside pipe's 'data' listener, where nothing catches it
  // (the process would crash). Checked, such a chunk fails the stream like any other error.
  if (body.readableObjectMode) body = bytesOnly(body)
  closeWhenStalled(res, response, kernel)
  const declared = response.header('content-length')
  if (declared !== undefined && hasContent(response.status))
    holdToLength(body, res, declared, kernel, whose(response, request))
  pipeWatched(body, res, streamFailure(res, body, response, request, kernel, rescuing))
}

/** The status and headers of a streamed answer, set to go out with its first chunk. */
function setStreamHead(res: ServerResponse, status: number, headers: NodeHeaders): void {
  res.statusCode = status
  if (Array.isArray(headers)) {
    // A name listed twice is two header lines, as writeHead sends them.
    for (let i = 0; i < headers.length; i += 2)
      res.appendHeader(headers[i] as string, headers[i + 1]!)
  } else {
    for (const name in headers) res.setHeader(name, headers[name]!)
  }
}

/**
 * What a failure of a streamed body does, once: before the first chunk, the error boundary's
 * answer replaces it; after, the connection ends (the client sees the body is incomplete).
 */
function streamFailure(
  res: ServerResponse,
  body: Readable,
  response: FwResponse,
  request: FwRequest,
  kernel: Kernel,
  rescuing: boolean,
): (error: unknown) => void {
  let failed = false
  return (error) => {
    if (failed) return
    failed = true
    if (res.headersSent || isDestroyed(res)) {
      // A body that stopped on the request's signal (the client left) failed no one.
      if (!isClientGone(error, request))
        kernel.log.warn(
          { err: error, ...whose(response, request) },
          'Streaming the response body failed',
        )
      cutShort(res)
      return
    }
    body.unpipe(res)
    for (const name of res.getHeaderNames()) res.removeHeader(name)
    const id = response.header('x-request-id')
    // The boundary's own answer failed as well (an error renderer streaming a page that cannot
    // be read): asked again, it would answer the same, failing over and over in microtasks, the
    // process frozen. The plain 500 instead.
    if (rescuing) return answerFailure(error, res, id, kernel, 'The error answer failed too')
    const answer = (rescued: FwResponse): void => {
      if (!isDestroyed(res)) send(res, restamped(rescued, response), request, kernel, true)
    }
    // The request as the kernel's context saw it: the error body names the same request id.
    kernel
      .answerError(error, id === undefined ? request : request.withAttribute('request_id', id))
      .then(answer)
      .catch(() => res.destroy())
  }
}

// What the kernel's outer steps (the request context, HSTS, CORS) put on every response: the
// error's answer to a body that failed is made after them, and carries theirs over.
const STAMPED = [
  'x-request-id',
  'strict-transport-security',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
]

/** `rescued` with the headers the kernel's outer steps gave `failed`, Vary merged. */
function restamped(rescued: FwResponse, failed: FwResponse): FwResponse {
  let answer = rescued
  for (const name of STAMPED) {
    const value = failed.headers[name]
    if (value !== undefined && !answer.hasHeader(name)) answer = answer.withHeader(name, value)
  }
  const vary = failed.header('vary')
  return vary === undefined
    ? answer
    : withVary(
        answer,
        vary.split(',').map((name) => name.trim()),
      )
}

/** Pipes `body` into `res`, calling `fail` on its error or early close; a client gone stops it. */
function pipeWatched(body: Readable, res: ServerResponse, fail: (error: unknown) => void): void {
  // `on`, not `once`: a stream that emits 'error' twice must not crash the process.
  body.on('error', fail)
  // A body destroyed without an error (`destroy()`, an upstream cut off) emits 'close' but no
  // 'end' or 'error': pipe() never ended the response, and the client waited for ever.
  const cut = (): void => {
    if (!body.readableEnded && !isDestroyed(res))
      fail(new Error('The streamed body was closed before its end'))
  }
  if (body.destroyed) cut()
  else body.once('close', cut)
  onceGone(res, () => {
    if (!body.readableEnded) body.destroy()
  })
  body.pipe(res)
}

/** `body` with every chunk checked to be a string or bytes: another fails the stream. */
function bytesOnly(body: Readable): Readable {
  const checked = new Transform({
    writableObjectMode: true,
    transform(chunk: unknown, _encoding, done) {
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) done(null, chunk)
      else done(new TypeError(`A streamed body yielded ${chunkKind(chunk)}, not a string or bytes`))
    },
  })
  // Errors and an early end travel both ways: a failed source fails `checked`, and destroying
  // `checked` (the client left, a HEAD) destroys the source. The callback only keeps pipeline
  // from throwing; `checked`'s own 'error' listener reports the failure.
  pipeline(body, checked, () => {})
  return checked
}

// RFC 9113 §8.2.2: fields of an HTTP/1.1 connection, which an HTTP/2 message must not carry.
const CONNECTION_FIELDS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
])

/**
 * `headers` without the connection-specific fields, for an HTTP/2 response: a handler's
 * `Connection: keep-alive` or `Keep-Alive`, harmless over HTTP/1.1, made Node refuse the whole
 * response there (ERR_HTTP2_INVALID_CONNECTION_HEADERS: a 500).
 */
function withoutConnectionFields(headers: NodeHeaders): NodeHeaders {
  if (Array.isArray(headers)) {
    const kept: (string | string[])[] = []
    for (let i = 0; i < headers.length; i += 2)
      if (!CONNECTION_FIELDS.has(String(headers[i]).toLowerCase()))
        kept.push(headers[i]!, headers[i + 1]!)
    return kept
  }
  const kept: Record<string, string | string[]> = {}
  for (const name in headers)
    if (!CONNECTION_FIELDS.has(name.toLowerCase())) kept[name] = headers[name]!
  return kept
}

/** Whether a response of `status` carries content (RFC 9110 §6.4.1: not 1xx, 204 or 304). */
function hasContent(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304
}

/**
 * Holds `body` to the Content-Length its response declares: Node writes whatever a stream yields,
 * so the excess of a longer body would be read by the client as the next response (response
 * splitting), and a shorter body would take the start of the next response as its rest. A chunk
 * that goes past the length, or an end short of it, cuts the connection instead (the chunk is
 * not written: Node drops writes to a destroyed response), which tells the client the body is
 * incomplete. It must listen before pipe() does, to see each chunk first.
 */
function holdToLength(
  body: Readable,
  res: ServerResponse,
  declared: string,
  kernel: Kernel,
  where: Where,
): void {
  // A length that is no number of bytes fits no body.
  let left = /^\d+$/.test(declared) ? Number(declared) : -1
  const check = (): void => {
    if (left === 0 || isDestroyed(res)) return
    kernel.log.warn({ declared, ...where }, 'A streamed body does not match its Content-Length')
    res.destroy()
  }
  body.on('data', (chunk: Buffer | string) => {
    left -= typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength
    if (left < 0) check()
  })
  body.once('end', check)
}

/** Which request a log line of a streamed body is about. */
interface Where {
  request_id: string | undefined
  path: string
}

/**
 * The request id and path for the log of a streamed body cut short: the line of the boundary's
 * 500 has them, and without them one of these could not be told from another's.
 */
function whose(response: FwResponse, request: FwRequest): Where {
  return { request_id: response.header('x-request-id'), path: request.getPath() }
}

function chunkKind(chunk: unknown): string {
  if (chunk === null || chunk === undefined) return String(chunk)
  return typeof chunk === 'object' ? 'an object' : `a ${typeof chunk}`
}
