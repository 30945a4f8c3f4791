/**
 * Connects the kernel to node:http: builds the request, lets the kernel answer, writes the
 * response (strings and bytes with Content-Length, streams piped), and removes uploaded temp
 * files once the response is done. The kernel is looked up per request, so a watcher can swap it
 * without dropping in-flight requests. What Node's parser refuses, answers itself or passes on
 * although fw cannot serve it is answered here too, as JSON errors, in request order.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Http2SecureServer, Http2Server } from 'node:http2'
import type { Duplex } from 'node:stream'
import type { Kernel } from './kernel.js'
import { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'
import { logExchange, logWireAnswer, noteFailure } from './access-log.js'
import { onceGone } from './gone.js'
import { answerFailure, discardBody, send } from './send-response.js'
import { checkOptions, optionNames } from '../shared/option-names.js'
import {
  answerClientError,
  answerConnect,
  BAD_REQUEST,
  EXPECTATION_FAILED,
  lingerOnClose,
  refusalOf,
  refuse,
  type WireAnswered,
} from './wire-errors.js'

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

export interface ListenerOptions {
  /**
   * For the server's 'checkContinue' event (requests sent with `Expect: 100-continue`, which
   * Node otherwise answers with "100 Continue" at once): the 100 is sent only when the body is
   * about to be read, so a request refused before (401, 404, a declared length over the limit:
   * 413) is answered without the client uploading its body.
   */
  expectContinue?: boolean | undefined
}

const LISTENER_OPTIONS = optionNames<ListenerOptions>({ expectContinue: 1 })

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
  checkOptions('createListener()', options, LISTENER_OPTIONS)
  const expectContinue = options.expectContinue === true
  // Made once per listener, so a request allocates no closure to be answered. They log through
  // current(): after a watch swap, the new kernel's logger, the same one.
  const reply = (response: FwResponse, request: FwRequest, res: ServerResponse): void => {
    if (request.needsCleanup()) removeUploadsAfter(request, res, current())
    try {
      // HTTP/2 ends the request's stream alone: its connection carries others, and lives on.
      if (
        !request.isBodyLoaded() &&
        !res.req.complete &&
        res.req.httpVersionMajor !== 2 &&
        !worthDraining(request)
      ) {
        res.shouldKeepAlive = false
        // res.socket is null while a pipelined response before this one is still being sent.
        lingerOnClose(res.req.socket)
      }
      send(res, response, request, current())
    } catch (error) {
      // Node refused the response (a header value with a line break, an invalid status). A
      // stream body will not be read now: close it (a file's descriptor would wait for the GC).
      discardBody(response)
      noteFailure(request, error)
      const id = response instanceof FwResponse ? response.header('x-request-id') : undefined
      answerFailure(error, res, id, current(), 'Node refused to write the response')
    }
  }
  // The pipeline rejected (only a bug in fw can make it) or threw before answering.
  const fail = (error: unknown, request: FwRequest, res: ServerResponse): void => {
    if (request.needsCleanup()) removeUploadsAfter(request, res, current())
    noteFailure(request, error)
    answerFailure(error, res, undefined, current(), 'The kernel failed to answer')
  }
  return (req, res) => {
    // A request read while the connection lingers (after its last response): no one will read
    // its answer, and the handler must not run for it.
    if (req.socket.writableEnded) return void req.socket.destroy()
    const refusal = refusalOf(req) ?? (expectContinue ? otherExpectation(req) : null)
    const kernel = current()
    if (refusal !== null) {
      if (kernel.accessLog) logExchange(kernel.log, res, undefined, false)
      return refuse(res, refusal)
    }
    let request: FwRequest
    try {
      const beforeBody = expectContinue ? () => res.writeContinue() : undefined
      request = FwRequest.fromNode(req, kernel.requestOptions, beforeBody, res)
    } catch (error) {
      kernel.log.warn({ err: error }, 'Unparseable request')
      if (kernel.accessLog) logExchange(kernel.log, res, undefined, false)
      return refuse(res, BAD_REQUEST)
    }
    // Off (the default), a request pays for this check only.
    if (kernel.accessLog) request = logExchange(kernel.log, res, request, kernel.builtins)
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
  onceGone(res, cleanup)
}

/**
 * Wires a node:http (or node:https, or node:http2 through its compatibility API) server to the
 * kernel: requests, and "Expect: 100-continue" ones (the 100 only once the body is read), through
 * `createListener`; requests Node refuses or would answer itself, each with a JSON error like fw's
 * others, then the connection closes (over HTTP/2, the stream): unparseable ones
 * (`answerClientError`), an HTTP/1.1 request without Host (400; Node's own check is turned off for
 * it), any other expectation (417) and CONNECT (501). `fw serve` uses it.
 * @example
 * const server = attachKernel(http.createServer(), () => kernel)
 * server.listen(3000)
 */
export function attachKernel<S extends Server | Http2Server | Http2SecureServer>(
  attached: S,
  current: () => Kernel,
): S {
  // node:http2's compatibility API emits these events too ('connect' with a response, not a
  // socket: answerConnect tells them apart).
  const server = attached as unknown as Server
  Object.assign(server, { requireHostHeader: false })
  server.on('request', createListener(current))
  server.on('checkContinue', createListener(current, { expectContinue: true }))
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    refuse(res, refusalOf(req) ?? EXPECTATION_FAILED),
  )
  // Their access log lines: the kernel's logger is the current kernel's, as for requests.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, wireLogger(current(), socket)),
  )
  server.on('connect', (req: IncomingMessage, target: Duplex | ServerResponse) =>
    answerConnect(req, target, wireLogger(current(), target as Duplex)),
  )
  return attached
}

/** The access log line of a request refused at the wire, when the access log is on. */
function wireLogger(kernel: Kernel, socket: Duplex): WireAnswered | undefined {
  if (!kernel.accessLog) return undefined
  const started = performance.now()
  return (answer) => logWireAnswer(kernel.log, socket, answer, started)
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
