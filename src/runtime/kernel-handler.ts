/**
 * A route's final step, built once at boot: load the body when a handler needs it, call the
 * handler with the route's parameters, and turn what it returns into a response.
 */
import type { Container } from './container.js'
import {
  resolveHandler,
  toResponse,
  type Invoke,
  type InvokedHandler,
  type Invoker,
} from './handlers.js'
import { requestScope } from './kernel-scope.js'
import { guarded, type Rescue, type Step } from './pipeline.js'
import type { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'
import type { HandlerRef, RouteRecord } from '../shared/route-record.js'

// What a route without placeholders passes its handler (shared: built-in invocation never keeps it).
const NO_PARAMS: readonly unknown[] = Object.freeze([])

/** What the kernel fixed at boot that every route's final step needs. */
export interface HandlerSettings {
  /** KernelOptions.invoker: the app's own way of calling handlers, if any. */
  invoker: Invoker | undefined
  container: Container
  /** One instance per controller class, shared by all its routes. */
  instances: Map<unknown, Record<string, unknown>>
  /** Whether the request scope is on (KernelOptions.requestScopeEnabled). */
  scoped: boolean
  rescue: Rescue
  /** Renders a view answer (`view(name, data)`) into HTML. */
  renderView: (response: FwResponse) => Promise<FwResponse>
}

/**
 * The final step of `record`'s pipeline; it rescues its own failures (a body that failed to load,
 * a handler that threw), so it never rejects.
 * @example
 * const step = handlerStep(record, settings)
 * const response = await step(request)
 */
export function handlerStep(record: RouteRecord, settings: HandlerSettings): Step {
  const { rescue, renderView } = settings
  const invoke = invokerOf(record.handler, settings)
  // A route without placeholders passes no parameters: no Object.values() per request.
  const takesParams = record.path.includes('{') || (record.host?.includes('{') ?? false)
  // This is the hot path. Synchronous unless the body is still to be read or the handler returns
  // a promise.
  const answer = (request: FwRequest): FwResponse | Promise<FwResponse> => {
    const params = takesParams
      ? Object.values(request.getAttribute('route.params') as Record<string, unknown>)
      : NO_PARAMS
    const result = invoke(request, params)
    return result instanceof Promise
      ? result.then((value) => finish(value, request, renderView))
      : finish(result, request, renderView)
  }
  const scopedAnswer = settings.scoped
    ? (request: FwRequest) => requestScope.run(request, answer, request)
    : answer
  // Its answer always went through finish(), so it is a response: no check (`checked` false).
  const safeAnswer = guarded(scopedAnswer, rescue, true, 'The handler', false)
  return (request) =>
    request.isBodyLoaded()
      ? safeAnswer(request)
      : request.loadBody().then(
          () => safeAnswer(request),
          (error: unknown) => rescue(error, request),
        )
}

/** The handler's result as a response: views rendered, foreign thenables awaited. */
function finish(
  result: unknown,
  request: FwRequest,
  renderView: HandlerSettings['renderView'],
): FwResponse | Promise<FwResponse> {
  // A foreign thenable (a query builder such as Knex's or Drizzle's, a PrismaPromise) is
  // awaited, as a middleware's is: as JSON it was `{}` or a 500 (circular).
  if (!(result instanceof FwResponse) && isThenable(result))
    return Promise.resolve(result).then((value) => finish(value, request, renderView))
  const response = toResponse(result)
  if (response.view) return renderView(response)
  // A streamed body is closed after the response unless it was sent: a middleware may drop it.
  const body = response.body
  if (typeof body === 'object' && body !== null && !(body instanceof Uint8Array))
    request.holdBody(body)
  return response
}

function invokerOf(handler: HandlerRef, settings: HandlerSettings): Invoke {
  const invoker = settings.invoker
  // A custom invoker gets an array of its own, even for a route without parameters. The handler
  // is the routes file's: a function takes the request and the parameters (InvokedHandler).
  const given = handler as InvokedHandler
  if (invoker)
    return (request, params) => invoker(given, request, params === NO_PARAMS ? [] : params)
  return resolveHandler(handler, settings.container, settings.instances)
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function'
}
