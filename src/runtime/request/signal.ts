/**
 * A request's abort signal (`FwRequest.getSignal()`): a web Request's own, the test factory's, or
 * one following the Node client, made with its listeners on first use: a request that never asks
 * costs nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { onceGone } from '../gone.js'

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
 * Whether `thrown` is the reason fw aborted a request's signal with (its client left), or the
 * AbortError of a Node API given the signal (timers/promises, events.once) caused by it.
 */
export function isClientGone(thrown: unknown): boolean {
  // A WeakSet answers false for a primitive (and runs no trap of a Proxy).
  if (REASONS.has(thrown as object)) return true
  try {
    return REASONS.has((thrown as { cause?: unknown } | null)?.cause as object)
  } catch {
    // A thrown Proxy whose get trap throws: no AbortError of ours.
    return false
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
