/**
 * Connects the kernel to node:http: builds the request, lets the kernel answer, writes the
 * response (strings and bytes with Content-Length, streams piped), and removes uploaded temp
 * files once the response is done. The kernel is looked up per request, so a watcher can swap it
 * without dropping in-flight requests. What Node's parser refuses, answers itself or passes on
 * although fw cannot serve it is answered here too, as JSON errors, in request order.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { pipeline, Transform, type Readable } from 'node:stream'
import type { Kernel } from './kernel.js'
import { FwRequest } from './request/request.js'
import { SAFE_ID } from './middleware/request-id.js'
import { FwResponse } from './response.js'
import {
  answerClientError,
  answerConnect,
  BAD_REQUEST,
  EXPECTATION_FAILED,
  jsonErrorHeaders,
  lingerOnClose,
  refusalOf,
  refuse,
} from './wire-errors.js'

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

export interface ListenerOptions {
  /**
   * For the server's 'checkContinue' event (requests sent with `Expect: 100-continue`, which
   * Node otherwise answers with "100 Continue" at once): the 100 is sent only when the body is
   * about to be read, so a request refused before (401, 404, a declared length over the limit:
   * 413) is answered without the client uploading its body.
   */
  expectContinue?: boolean
}

/**
 * The 'request' listener: answers each request through the kernel current at its arrival. Before
 * routing it refuses, and closes the connection after, a header list Node cut short (431), an
 * HTTP/1.1 request without Host (400), a transfer coding other than chunked (501), and a
 * Transfer-Encoding that lists no coding or comes in an HTTP/1.0 request (400).
 * `attachKernel` wires it with the other listeners.
 * @example
 * const server = http.createServer(createListener(() => kernel))
 * server.on('checkContinue', createListener(() => kernel, { expectContinue: true }))
 * server.listen(3000)
 */
export function createListener(current: () => Kernel, options: ListenerOptions = {}): NodeListener {
  const expectContinue = options.expectContinue === true
  // Made once per listener, so a request allocates no closure to be answered. They log through
  // current(): after a watch swap, the new kernel's logger, the same one.
  const reply = (response: FwResponse, request: FwRequest, res: ServerResponse): void => {
    if (request.needsCleanup()) removeUploadsAfter(request, res, current())
    try {
      if (!request.isBodyLoaded() && !res.req.complete && !worthDraining(request)) {
        res.shouldKeepAlive = false
        // res.socket is null while a pipelined response before this one is still being sent.
        lingerOnClose(res.req.socket)
      }
      send(res, response, request, current())
    } catch (error) {
      // Node refused the response (a header value with a line break, an invalid status). A
      // stream body will not be read now: close it (a file's descriptor would wait for the GC).
      discardBody(response)
      const id = response instanceof FwResponse ? response.header('x-request-id') : undefined
      answerFailure(error, res, id, current(), 'Node refused to write the response')
    }
  }
  // The pipeline rejected (only a bug in fw can make it) or threw before answering.
  const fail = (error: unknown, request: FwRequest, res: ServerResponse): void => {
    if (request.needsCleanup()) removeUploadsAfter(request, res, current())
    answerFailure(error, res, undefined, current(), 'The kernel failed to answer')
  }
  return (req, res) => {
    // A request read while the connection lingers (after its last response): no one will read
    // its answer, and the handler must not run for it.
    if (req.socket.writableEnded) return void req.socket.destroy()
    const refusal = refusalOf(req) ?? (expectContinue ? otherExpectation(req) : null)
    if (refusal !== null) return refuse(res, refusal)
    const kernel = current()
    let request: FwRequest
    try {
      const beforeBody = expectContinue ? () => res.writeContinue() : undefined
      request = FwRequest.fromNode(req, kernel.requestOptions, beforeBody)
    } catch (error) {
      kernel.log.warn({ err: error }, 'Unparseable request')
      return refuse(res, BAD_REQUEST)
    }
    // The response is written from the kernel's own reaction to the pipeline (or at once, when
    // every step answered synchronously): no second promise just to write it.
    try {
      void kernel.respondTo(request, res, reply, fail)
    } catch (error) {
      fail(error, request, res)
    }
  }
}

/**
 * 417 for an Expect that is not exactly 100-continue: Node's own check takes any value naming it
 * (`100-continue-x`, `100-continue, foo`) as 100-continue, and the client would be told to send.
 */
function otherExpectation(req: IncomingMessage): typeof EXPECTATION_FAILED | null {
  const expect = req.headers.expect
  return expect?.trim().toLowerCase() === '100-continue' ? null : EXPECTATION_FAILED
}

/**
 * Removes `request`'s uploaded temp files once the response is done or the client went away:
 * at once when the connection is already closed (its 'close' has fired, and will not again).
 */
function removeUploadsAfter(request: FwRequest, res: ServerResponse, kernel: Kernel): void {
  const cleanup = (): void => {
    request.cleanup().catch((error: unknown) => {
      kernel.log.warn({ err: error }, 'Removing uploaded temp files failed')
    })
  }
  if (res.closed) cleanup()
  else res.once('close', cleanup)
}

function discardBody(response: FwResponse): void {
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
function answerFailure(
  error: unknown,
  res: ServerResponse,
  id: string | undefined,
  kernel: Kernel,
  message: string,
): void {
  const requestId = id !== undefined && SAFE_ID.test(id) ? id : undefined
  kernel.log.error({ err: error, request_id: requestId }, message)
  try {
    if (res.headersSent || res.destroyed) {
      res.destroy()
      return
    }
    const body = JSON.stringify({ error: FAILURE_REASON, code: 500, request_id: requestId })
    const headers = jsonErrorHeaders(body)
    if (requestId !== undefined) headers['x-request-id'] = requestId
    for (const name of res.getHeaderNames()) res.removeHeader(name)
    const state = res as ServerResponse & { _hasBody: boolean }
    res.chunkedEncoding = false
    state._hasBody = res.req.method !== 'HEAD'
    res.writeHead(500, FAILURE_REASON, headers)
    res.end(body)
  } catch (failure) {
    kernel.log.error({ err: failure }, 'The 500 answer could not be written either')
    res.destroy()
  }
}

/**
 * Wires a node:http (or node:https) server to the kernel: requests, and "Expect: 100-continue"
 * ones (the 100 only once the body is read), through `createListener`; requests Node refuses or
 * would answer itself, each with a JSON error like fw's others, then the connection closes:
 * unparseable ones (`answerClientError`), an HTTP/1.1 request without Host (400; Node's own check
 * is turned off for it), any other expectation (417) and CONNECT (501). `fw serve` uses it.
 * @example
 * const server = attachKernel(http.createServer(), () => kernel)
 * server.listen(3000)
 */
export function attachKernel<S extends Server>(server: S, current: () => Kernel): S {
  Object.assign(server, { requireHostHeader: false })
  server.on('request', createListener(current))
  server.on('checkContinue', createListener(current, { expectContinue: true }))
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    refuse(res, refusalOf(req) ?? EXPECTATION_FAILED),
  )
  server.on('clientError', answerClientError)
  server.on('connect', answerConnect)
  return server
}

// Node reads whatever is left of a request body after the response, to reuse the connection
// (a 413 for a declared gigabyte would read the gigabyte). Up to this much that is worth it, as
// in Go's net/http; beyond it, or when the length is unknown (chunked), the connection closes.
const DRAIN_LIMIT = 256 * 1024

/** Whether the unread rest of `request`'s body is small enough to read and discard. */
function worthDraining(request: FwRequest): boolean {
  const declared = request.getHeaderLine('content-length')
  return declared !== '' && Number(declared) <= DRAIN_LIMIT
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

/**
 * Writes a response. Hot path: keep it to one writeHead and one end for in-memory bodies.
 * `rescuing`: the response is the error boundary's answer to a streamed body that failed.
 */
function send(
  res: ServerResponse,
  answer: FwResponse,
  request: FwRequest,
  kernel: Kernel,
  rescuing = false,
): void {
  const status = answer.status
  const response =
    answer.body !== null && (status === 205 || !hasContent(status)) ? withoutBody(answer) : answer
  const body = response.body
  // Everything goes into writeHead, Content-Length included: a setHeader() before it would send
  // Node down its slow path (every header re-validated and stored one by one).
  const headers = FwResponse.wireHeaders(response) as NodeHeaders
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
 * attack) held the connection, the unsent bytes and a file's descriptor for ever. Node restarts a
 * socket's timeout whenever a write makes progress, so a client that reads slowly is not cut; a
 * timeout with nothing waiting to be sent is a stream that is only quiet (server-sent events
 * between two events), and leaves the connection open.
 */
function closeWhenStalled(res: ServerResponse, response: FwResponse, kernel: Kernel): void {
  const ms = kernel.sendTimeoutMs
  if (ms === 0) return
  res.setTimeout(ms, () => {
    if (res.writableLength === 0 || res.destroyed) return
    kernel.log.warn(
      { request_id: response.header('x-request-id'), unsent: res.writableLength },
      `The client took none of the response for ${ms} ms: connection closed`,
    )
    res.destroy()
  })
  // Sent, the response leaves the socket's timeout to Node: kept, it closed the connection, with
  // no word, under a later response on it (a pipelined request whose handler took longer). This
  // runs before Node's own 'finish' listener, which then sets the keep-alive timeout.
  res.prependOnceListener('finish', () => res.socket?.setTimeout(0))
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
  if (res.destroyed) {
    body.destroy()
    return
  }
  // Chunks of an object-mode stream (Readable.from, an async generator) may be what a socket
  // cannot take: res.write would throw inside pipe's 'data' listener, where nothing catches it
  // (the process would crash). Checked, such a chunk fails the stream like any other error.
  if (body.readableObjectMode) body = bytesOnly(body)
  res.statusCode = response.status
  if (Array.isArray(headers)) {
    // A name listed twice is two header lines, as writeHead sends them.
    for (let i = 0; i < headers.length; i += 2)
      res.appendHeader(headers[i] as string, headers[i + 1]!)
  } else {
    for (const name in headers) res.setHeader(name, headers[name]!)
  }
  // HEAD sends the headers only: reading a whole file to discard it would be wasted work.
  if (res.req.method === 'HEAD') {
    body.destroy()
    res.end()
    return
  }
  closeWhenStalled(res, response, kernel)
  const declared = response.header('content-length')
  if (declared !== undefined && hasContent(response.status))
    holdToLength(body, res, declared, kernel)
  let failed = false
  const fail = (error: unknown): void => {
    if (failed) return
    failed = true
    if (res.headersSent || res.destroyed) {
      kernel.log.warn({ err: error }, 'Streaming the response body failed')
      res.destroy()
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
      if (!res.destroyed)
        send(
          res,
          id === undefined ? rescued : rescued.withHeader('x-request-id', id),
          request,
          kernel,
          true,
        )
    }
    // The request as the kernel's context saw it: the error body names the same request id.
    kernel
      .answerError(error, id === undefined ? request : request.withAttribute('request_id', id))
      .then(answer)
      .catch(() => res.destroy())
  }
  // `on`, not `once`: a stream that emits 'error' twice must not crash the process.
  body.on('error', fail)
  // A body destroyed without an error (`destroy()`, an upstream cut off) emits 'close' but no
  // 'end' or 'error': pipe() never ended the response, and the client waited for ever.
  const cut = (): void => {
    if (!body.readableEnded && !res.destroyed)
      fail(new Error('The streamed body was closed before its end'))
  }
  if (body.destroyed) cut()
  else body.once('close', cut)
  res.once('close', () => {
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
function holdToLength(body: Readable, res: ServerResponse, declared: string, kernel: Kernel): void {
  // A length that is no number of bytes fits no body.
  let left = /^\d+$/.test(declared) ? Number(declared) : -1
  const check = (): void => {
    if (left === 0 || res.destroyed) return
    kernel.log.warn({ declared }, 'A streamed body does not match its Content-Length')
    res.destroy()
  }
  body.on('data', (chunk: Buffer | string) => {
    left -= typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength
    if (left < 0) check()
  })
  body.once('end', check)
}

function chunkKind(chunk: unknown): string {
  if (chunk === null || chunk === undefined) return String(chunk)
  return typeof chunk === 'object' ? 'an object' : `a ${typeof chunk}`
}
