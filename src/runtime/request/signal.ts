/**
 * A request's abort signal (`FwRequest.getSignal()`): a web Request's own, the test factory's, or
 * one following the Node client, made with its listeners on first use: a request that never asks
 * costs nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { onceGone } from '../gone.js'
import { HttpError } from '../http-error.js'

/** What a request's signal comes from: a signal of its own, or the Node exchange it came by. */
export type SignalSource = AbortSignal | IncomingMessage | ServerResponse

// One per Node request, shared by the copies `with*` makes (they share the source).
const SIGNALS = new WeakMap<object, AbortSignal>()

// The reasons fw aborted with. One thrown by a handler (fetch() rejects with it) only says the
// client left: the error boundary does not log it as a failure.
const REASONS = new WeakSet<object>()

/**
 * The signal of `source`, made on first use for a Node request.
 * @example
 * await fetch(upstream, { signal: signalOf(state.source) })
 */
export function signalOf(source: SignalSource): AbortSignal {
  if (source instanceof AbortSignal) return source
  let signal = SIGNALS.get(source)
  if (signal === undefined) SIGNALS.set(source, (signal = follow(source)))
  return signal
}

/**
 * A web Request's signal as `getSignal()` gives it: its own, else one that never aborts (a
 * Request-like object without one: node-fetch's is null), or one that follows another realm's or
 * library's (fetch() takes only this realm's AbortSignal). Read as a Node request, they threw.
 * @example
 * webSignal(request.signal) // request.signal, for a Request of this realm
 */
export function webSignal(signal: unknown): AbortSignal {
  if (signal instanceof AbortSignal) return signal
  const controller = new AbortController()
  const other = signal as Partial<AbortSignal> | null | undefined
  if (other?.aborted === true) controller.abort(other.reason)
  else other?.addEventListener?.('abort', () => controller.abort(other.reason), { once: true })
  return controller.signal
}

/**
 * The signal `getSignal()` gave for `source`, or undefined when it was never asked for (a Node
 * request's is made on first use): read without making one.
 */
export function signalMadeFor(source: SignalSource): AbortSignal | undefined {
  return source instanceof AbortSignal ? source : SIGNALS.get(source)
}

/**
 * Whether `thrown` says that `request`'s client left: the reason its signal was aborted with,
 * or an error caused by it (the AbortError of timers/promises, events.once or stream.finished;
 * fetch() rejects with the reason itself). A Node request's reason is fw's own; a web Request's
 * (`fromWeb`) is its host's, whatever it chose (an Error, a DOMException, a string). Another
 * request's reason is no sign this one's client left: a handler awaiting work started with that
 * request's signal (a fetch shared by concurrent requests) failed, and its client still waits.
 */
export function isClientGone(thrown: unknown, request: { getSignal(): AbortSignal }): boolean {
  const reason = ourReason(thrown)
  // Only a thrown reason of ours pays for a Node request's signal (made here if it was not yet)...
  if (reason !== undefined) return request.getSignal().reason === reason
  // ...or what may be a host's: an HttpError (a 404 among them, the commonest) never is.
  if (isHttpError(thrown)) return false
  const signal = request.getSignal()
  return signal.aborted && isOrCauses(thrown, signal.reason)
}

/** Whether `thrown` is `reason`, or an error whose cause is `reason`. */
function isOrCauses(thrown: unknown, reason: unknown): boolean {
  if (thrown === reason) return true
  try {
    return typeof thrown === 'object' && thrown !== null && (thrown as Error).cause === reason
  } catch {
    // A thrown Proxy whose get trap throws.
    return false
  }
}

// `instanceof` runs a Proxy's getPrototypeOf trap, which may throw.
function isHttpError(thrown: unknown): boolean {
  try {
    return thrown instanceof HttpError
  } catch {
    return false
  }
}

/** `thrown`, or its cause, when it is a reason fw aborted a signal with. */
function ourReason(thrown: unknown): object | undefined {
  // A WeakSet answers false for a primitive (and runs no trap of a Proxy).
  if (REASONS.has(thrown as object)) return thrown as object
  try {
    const cause = (thrown as { cause?: unknown } | null)?.cause as object
    return REASONS.has(cause) ? cause : undefined
  } catch {
    // A thrown Proxy whose get trap throws: no AbortError of ours.
    return undefined
  }
}

/**
 * A signal aborted when the connection (an HTTP/2 stream) closes before the response was sent
 * in full (Node's `writableFinished`): never after a complete response.
 */
function follow(source: IncomingMessage | ServerResponse): AbortSignal {
  const controller = new AbortController()
  const abort = (): void => {
    const reason = new DOMException(
      'The client closed the connection before the response was sent',
      'AbortError',
    )
    REASONS.add(reason)
    controller.abort(reason)
  }
  const res = 'req' in source ? source : null
  const req = res?.req ?? (source as IncomingMessage)
  // node:http2: the request says 'aborted' when its stream is reset before the response ended
  // (the response's writableFinished is true then too).
  if (req.httpVersionMajor === 2) {
    if ((req as { aborted?: boolean }).aborted === true) abort()
    else req.once('aborted', abort)
  } else if (res !== null) {
    // onceGone: a response queued behind a pipelined one gets no 'close' of its own.
    onceGone(res, () => res.writableFinished || abort())
  } else {
    // fromNode(req) without its response: Node fails the request when the connection closes
    // before its answer, unless the body was read (then only the response tells).
    const check = (): unknown => req.errored && abort()
    if (req.destroyed) check()
    else req.once('close', check)
  }
  return controller.signal
}
