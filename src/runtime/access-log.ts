/**
 * The access log (KernelOptions.accessLog): one `info` line per request answered over node:http,
 * with pino-http's fields and messages, once its response is sent in full ("request completed",
 * or "request errored" for a 5xx, with a reference to what failed) or its client left before
 * ("request aborted"); and one for a request refused at the wire, Node's parser included. Never a
 * header value or a body; the target's credentials (a signed URL's `_sig`, a `token` parameter,
 * a pre-signed URL's signature, a JWT) `[Redacted]`.
 */
import type { ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { escapeControls } from '../shared/escape-controls.js'
import { onceGone } from './gone.js'
import { ErrorReference, redactTarget } from './logger.js'
import { clientAddress } from './middleware/client-ip.js'
import { requestIdFor, safeRequestId } from './middleware/request-id.js'
import type { FwRequest } from './request/request.js'
import { signalMadeFor } from './request/signal.js'
import { unmapAddress } from './request/uri.js'
import type { Logger } from './types.js'
import type { WireAnswer } from './wire-errors.js'

export const COMPLETED = 'request completed'
export const ERRORED = 'request errored'
export const ABORTED = 'request aborted'

/** The fields of an access log line. */
export interface AccessEntry {
  req: {
    /** The request id (X-Request-Id), when it has one. */
    id?: string | undefined
    /** The method as received (before X-Http-Method-Override); absent when it could not be read. */
    method?: string
    /**
     * The request target as received (path and query), its credentials redacted; absent when it
     * could not be read.
     */
    url?: string
    /** The client's address, as `client_ip` resolves it through trusted proxies. */
    remoteAddress: string
  }
  /** The status sent; null when the client left before it was. */
  res: { statusCode: number | null }
  /** Milliseconds from the request's arrival to its response sent, or its client gone. */
  responseTime: number
  /**
   * On a "request errored" line, what failed, when something was thrown: its type, code and
   * message. Its stack is on the error boundary's line, under the same request id.
   */
  err?: ErrorReference
}

// What was thrown for requests answered with a 5xx, by their signal: the one object every copy
// of a request shares (the access log holds the request as it arrived; the error boundary gets
// the one the failing layer had).
const FAILURES = new WeakMap<AbortSignal, unknown>()
// The status Node's parser failure was answered with on the connection, for a response whose
// request's body was malformed: its own line says so, as what fw sent.
const WIRE_STATUS = new WeakMap<ServerResponse, number>()

/**
 * Keeps `thrown` as what failed `request`, for its access log line ("request errored"). The
 * error boundary calls it for each 5xx it answers.
 */
export function noteFailure(request: { getSignal(): AbortSignal }, thrown: unknown): void {
  FAILURES.set(request.getSignal(), thrown)
}

/**
 * Logs `res`'s exchange through `log` once it is over (one 'close' listener, see onceGone).
 * `request` (absent when the request was refused before one could be made) is returned with the
 * request id its line will carry, for the kernel's request context to take (`presetRequestId`):
 * a line for a client that left before its answer names the id the app's own lines carry.
 * @example
 * if (kernel.accessLog) request = logExchange(kernel.log, res, request, true)
 */
export function logExchange<R extends FwRequest | undefined>(
  log: Logger,
  res: ServerResponse,
  request: R,
  presetId: boolean,
): R {
  const started = performance.now()
  const req = res.req
  const id = request !== undefined && presetId ? requestIdFor(request) : undefined
  // Read now: a closed socket has no address any more.
  const remoteAddress =
    request !== undefined ? clientAddress(request) : (unmapAddress(req.socket.remoteAddress) ?? '')
  onceGone(res, () => {
    // Ended and handed to the connection whole (node:http2 calls a cancelled stream finished),
    // or answered by fw at the wire when Node's parser failed on its body.
    const wire = res.headersSent ? undefined : WIRE_STATUS.get(res)
    const sent = (res.writableEnded && res.writableFinished) || wire !== undefined
    const statusCode = res.headersSent ? res.statusCode : (wire ?? null)
    const header = res.getHeader('x-request-id')
    const entry: AccessEntry = {
      req: {
        id:
          (typeof header === 'string' ? header : id) ?? safeRequestId(req.headers['x-request-id']),
        method: req.method ?? '',
        url: redactTarget(req.url ?? ''),
        remoteAddress,
      },
      res: { statusCode },
      responseTime: elapsedSince(started),
    }
    if (!sent) return log.info(entry, ABORTED)
    if (statusCode === null || statusCode < 500) return log.info(entry, COMPLETED)
    // A failure was noted through the request's signal, made then if it was not yet.
    const signal = signalMadeFor(res)
    if (signal !== undefined && FAILURES.has(signal))
      entry.err = new ErrorReference(FAILURES.get(signal))
    log.info(entry, ERRORED)
  })
  return (id === undefined ? request : request!.withAttributes({ request_id: id })) as R
}

// What of a refused target is shown: enough to tell the request, not 16 KiB of a 414's.
const MAX_REFUSED_TARGET = 256

/**
 * Logs a request refused at the wire without a response of its own (`answerClientError`: what
 * Node's parser refused; `answerConnect`), once its answer was written, `started` being when it
 * was refused. Its method and target when its request line could be read (the target cut at
 * MAX_REFUSED_TARGET characters, its control characters escaped, its credentials redacted), no
 * request id (no header was read), and for a 5xx the parser's error (its code and message, never
 * the bytes it kept). A request whose body was malformed has its own line, which reports the
 * answer.
 * @example
 * answerClientError(error, socket, (answer) => logWireAnswer(kernel.log, socket, answer, started))
 */
export function logWireAnswer(
  log: Logger,
  socket: Duplex,
  answer: WireAnswer,
  started: number,
): void {
  if (answer.failing !== null) return void WIRE_STATUS.set(answer.failing, answer.status)
  const address = unmapAddress((socket as { remoteAddress?: string }).remoteAddress) ?? ''
  const req: AccessEntry['req'] = { remoteAddress: address }
  if (answer.method !== undefined) req.method = answer.method
  if (answer.target !== undefined)
    req.url = escapeControls(redactTarget(answer.target, MAX_REFUSED_TARGET))
  const entry: AccessEntry = {
    req,
    res: { statusCode: answer.status },
    responseTime: elapsedSince(started),
  }
  if (answer.status < 500) return log.info(entry, COMPLETED)
  if (answer.error !== undefined) entry.err = new ErrorReference(answer.error)
  log.info(entry, ERRORED)
}

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000
}
