/**
 * The kernel's side of the error boundary: what it knows of a failed request (Accept, path,
 * request id) handed to the default renderer, or to the app's custom one under a deadline, with
 * the default as the fallback when that one fails.
 */
import { noteFailure } from './access-log.js'
import {
  renderError,
  requestFields,
  settleWithin,
  toHttpError,
  withErrorHeaders,
  type ErrorRenderer,
} from './error-boundary.js'
import { HttpError } from './http-error.js'
import { requestScope } from './kernel-scope.js'
import { notAResponse } from './pipeline.js'
import type { FwRequest } from './request/request.js'
import { isClientGone } from './request/signal.js'
import { FwResponse } from './response.js'
import type { Logger } from './types.js'

/** What the kernel fixed at boot that the rescue needs. */
export interface RescueSettings {
  debug: boolean
  log: Logger
  renderer: ErrorRenderer | undefined
  /** How long the custom renderer may take (KernelOptions.errorRendererTimeoutMs). */
  timeoutMs: number
  /** Whether the request scope is on (KernelOptions.requestScopeEnabled). */
  scoped: boolean
  /** Renders a view answer (an error page template) as a handler's is rendered. */
  renderView: (response: FwResponse) => Promise<FwResponse>
}

/**
 * The response for `thrown`, raised while handling `request`; never rejects.
 * @example
 * const response = await rescueError(new Error('boom'), request, settings) // 500
 */
export function rescueError(
  thrown: unknown,
  request: FwRequest,
  settings: RescueSettings,
): Promise<FwResponse> {
  // With the request scope on, all of it runs in the failed request's scope: the lines it logs
  // too, not only the custom renderer. A logger that reads currentRequest() (its request id, an
  // attribute a middleware set) got the request as it arrived, outside every layer, for an error
  // any layer or handler raised.
  return settings.scoped
    ? requestScope.run(request, rescueInScope, thrown, request, settings)
    : rescueInScope(thrown, request, settings)
}

async function rescueInScope(
  thrown: unknown,
  request: FwRequest,
  settings: RescueSettings,
): Promise<FwResponse> {
  const context = {
    accept: request.getHeaderLine('accept'),
    path: request.getPath(),
    requestId: (request.getAttribute('request_id') as string | null | undefined) ?? undefined,
    debug: settings.debug,
    log: settings.log,
    method: request.getMethod(),
    route: request.getAttribute('route.name') as string | null | undefined,
    // Read when logged only: without a traceparent, a 404 would make a trace id for nothing.
    get traceId() {
      return (request.getAttribute('trace.trace_id') as string | null | undefined) ?? undefined
    },
  }
  // A handler that gave up on this request's signal (fetch() rejects with its reason): the client
  // left, no failure to log (one client could flood the log so), no one reads the answer (499).
  const error = isClientGone(thrown, request)
    ? new HttpError(499, { message: 'Client Closed Request', cause: thrown })
    : toHttpError(thrown, context)
  // The access log's "request errored" line names what failed (a 5xx only: rarely).
  if (error.status >= 500) noteFailure(request, thrown)
  const renderer = settings.renderer
  if (!renderer) return renderError(error, context)
  try {
    // In the failed request's scope (rescueError): the renderer's currentRequest() is that
    // request, with its request id, also for a routing miss outside any layer.
    const answer = renderer(error, context)
    const rendered: unknown = await settleWithin(answer, settings.timeoutMs)
    // A view answer (an error page template) is rendered as a handler's is; one that fails to
    // render falls back to the default rendering, as any failure of the renderer does.
    // The headers the status needs (a 405's Allow, a 401's challenge) and ERROR_HEADERS are
    // added where the renderer left them out.
    if (rendered instanceof FwResponse)
      return withErrorHeaders(rendered.view ? await settings.renderView(rendered) : rendered, error)
    throw notAResponse(
      'The custom error renderer',
      rendered,
      'return an FwResponse, such as json(body, error.status) or view(name, data, error.status)',
    )
  } catch (failure) {
    settings.log.error(
      { err: failure, ...requestFields(context) },
      'The custom error renderer failed',
    )
    return renderError(error, context)
  }
}
