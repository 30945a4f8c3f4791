/**
 * Runs a list of middleware around a final step. Every `next` call is guarded: whatever the
 * downstream layers throw comes back as a rendered error response, so outer middleware always
 * see a response (and can still add their headers, e.g. the request id, to a 404).
 * This is the hot path: change with care and run `npm run bench`. The `next` functions are made
 * once, at boot, so a request allocates no closure per layer.
 */
import { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'
import type { Middleware, Next } from './types.js'

export type Step = (request: FwRequest) => FwResponse | Promise<FwResponse>
export type Rescue = (error: unknown, request: FwRequest) => Promise<FwResponse>
/** Renders a `view()` response a middleware answered with (never rejects: failures are rescued). */
export type Render = (response: FwResponse, request: FwRequest) => Promise<FwResponse>

/** What gets the response of a request (`request` is the one given to the entry). */
export type Finish<C, T> = (response: FwResponse, request: FwRequest, context: C) => T
/** What gets a pipeline's rejection, which never happens unless the kernel itself is broken. */
export type Failed<C, T> = (error: unknown, request: FwRequest, context: C) => T

/**
 * The kernel's outermost step in continuation form: the response goes to `finish`, at once when
 * every step answered synchronously, else in the one reaction to the pipeline's promise. An
 * adapter writes the response from `finish`: one `.then` per request, not one to finish the
 * response and another to write it. `context` is handed through, so callers need no closure.
 */
export type Entry = <C, T>(
  request: FwRequest,
  context: C,
  finish: Finish<C, T>,
  failed: Failed<C, T>,
) => T | Promise<T>

/** `step` as an entry. */
export function entryOf(step: Step): Entry {
  return (request, context, finish, failed) => {
    const response = step(request)
    if (response instanceof Promise) return finishLater(response, request, context, finish, failed)
    return finish(response, request, context)
  }
}

/**
 * `finish` once `response` settles (`failed` if it rejects). Apart from the entry that calls it,
 * so that only a request answered later allocates these closures and the context they share.
 */
export function finishLater<C, T>(
  response: Promise<FwResponse>,
  request: FwRequest,
  context: C,
  finish: Finish<C, T>,
  failed: Failed<C, T>,
): Promise<T> {
  return response.then(
    (answered) => finish(answered, request, context),
    (error: unknown) => failed(error, request, context),
  )
}

/**
 * Composes `layers` around `final` into one step.
 * @example
 * const run = compose([requestId, trace], handler, rescue)
 * const response = await run(request)
 */
export function compose(
  layers: readonly Middleware[],
  final: Step,
  rescue: Rescue,
  { finalRescues = false, render }: { finalRescues?: boolean; render?: Render } = {},
): Step {
  // steps[i] runs layer i (steps[layers.length] runs the final step), each guarded. Every step
  // but the first is some layer's `next`, which promises a response; the first (what the caller
  // runs) answers synchronously when it can. A final step that rescues its own failures
  // (`finalRescues`) is not wrapped again: one promise and one microtask less.
  const steps: Step[] = new Array(layers.length + 1)
  steps[layers.length] = finalRescues
    ? promising(final, layers.length === 0)
    : guarded(final, rescue, layers.length === 0, 'The handler')
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!
    const next = steps[i + 1] as Next
    const what = layer.name === '' ? 'A middleware' : `Middleware "${layer.name}"`
    steps[i] = guarded((request) => layer(request, next), rescue, i === 0, what, true, render)
  }
  return steps[0]!
}

/** `step` as it is, or (unless `sync`) with a synchronous response turned into a promise. */
function promising(step: Step, sync: boolean): Step {
  if (sync) return step
  return (request) => {
    if (!(request instanceof FwRequest)) throw noRequest('The handler', request)
    const result = step(request)
    return result instanceof Promise ? result : Promise.resolve(result)
  }
}

/**
 * `step` guarded: what it throws (or rejects with) is rescued, and so is an answer that is not a
 * response (a middleware that forgot to `return next(request)`), named after `what`. Not an
 * async function: a step that returns a promise gets one `.then`, a synchronous one none (and,
 * when `sync` allows, its response is returned as it is), which saves promises and microtasks on
 * every request. The check is in the same `.then` as the rescue: a throw in its fulfilment
 * handler would escape the rescue beside it, so it rescues rather than throws. A step whose
 * promise can only fulfil with a response (`checked` false: the kernel's handler step, which
 * makes its response itself) is not checked: one closure per request less.
 */
export function guarded(
  step: Step,
  rescue: Rescue,
  sync: boolean,
  what = 'A middleware',
  checked = true,
  render?: Render,
): Step {
  return (request) => {
    // Thrown to the middleware that called next(): it has the request to rescue with.
    if (!(request instanceof FwRequest)) throw noRequest(what, request)
    let result: FwResponse | Promise<FwResponse>
    try {
      result = step(request)
    } catch (error) {
      return rescue(error, request)
    }
    if (result instanceof Promise)
      return result.then(
        checked
          ? (answered: unknown) =>
              answered instanceof FwResponse
                ? rendered(answered, request, render)
                : rescue(notAResponse(what, answered), request)
          : undefined,
        (error: unknown) => rescue(error, request),
      )
    if (result instanceof FwResponse) {
      const answer = rendered(result, request, render)
      return sync || answer !== result ? answer : Promise.resolve(answer)
    }
    return adopt(result, what, request, rescue, render)
  }
}

/**
 * `response`, or its view rendered when it is one: a middleware may answer `view()` (a login
 * form, a maintenance page), which left the pipeline without a body, an empty page. The
 * handler's and the error renderer's views are rendered by the kernel.
 */
function rendered(
  response: FwResponse,
  request: FwRequest,
  render: Render | undefined,
): FwResponse | Promise<FwResponse> {
  return response.view === null || render === undefined ? response : render(response, request)
}

/** A synchronous answer that is not a response: a foreign thenable is awaited, anything else rescued. */
function adopt(
  result: unknown,
  what: string,
  request: FwRequest,
  rescue: Rescue,
  render: Render | undefined,
): Promise<FwResponse> {
  const then = (result as { then?: unknown } | null | undefined)?.then
  if (typeof then !== 'function') return rescue(notAResponse(what, result), request)
  return guarded(
    () => Promise.resolve(result as FwResponse),
    rescue,
    false,
    what,
    true,
    render,
  )(request) as Promise<FwResponse>
}

/**
 * The error for `next()` called without the request (Koa's and Hono's `await next()`), or with
 * something else (a context object, a plain object of its own): the next layer failed on it
 * ('request.isBodyLoaded is not a function'), and the log named neither the slip nor the
 * middleware.
 */
function noRequest(next: string, given: unknown): TypeError {
  const before = next[0]!.toLowerCase() + next.slice(1)
  const what =
    given === undefined
      ? 'without the request'
      : `with ${given === null ? 'null' : typeof given === 'object' ? 'an object' : `a ${typeof given}`} that is not the request`
  return new TypeError(
    `A middleware called next() ${what} (before ${before}): pass it on, next(request)`,
  )
}

/**
 * The error for a step that answered `value` instead of a response.
 * @example
 * rescue(notAResponse('Middleware "timing"', undefined), request)
 */
export function notAResponse(
  what: string,
  value: unknown,
  hint = 'return the response of next(request), or one of its own',
): TypeError {
  return new TypeError(`${what} returned ${describeValue(value)} instead of a response: ${hint}`)
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (typeof value !== 'object') return `a ${typeof value}`
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name
  return typeof name === 'string' && name !== '' ? `an object (${name})` : 'an object'
}
