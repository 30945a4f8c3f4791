/**
 * The always-on request context: `client_ip`, `request_id` (echoed as X-Request-Id) and
 * `trace.trace_id`, plus the production HTTPS redirect before them. The kernel wraps its whole
 * pipeline in `withContext` rather than running these as middleware layers: no `next` promise,
 * no guard, and a response answered synchronously stays synchronous. The separate middleware
 * (clientIp, requestId, trace, httpsRedirect) remain for apps that turn builtins off.
 */
import type { Rescue, Step } from '../pipeline.js'
import type { FwRequest } from '../request/request.js'
import type { FwResponse } from '../response.js'
import type { Middleware } from '../types.js'
import { clientAddress } from './client-ip.js'
import { toHttps } from './https-redirect.js'
import { requestIdFor } from './request-id.js'
import { traceIdOf } from './trace.js'

// Computed on first read, from the request as it arrived: most handlers never read them.
const COMPUTED = {
  client_ip: clientAddress,
  'trace.trace_id': (request: FwRequest): string => traceIdOf(request.getHeaderLine('traceparent')),
}

/** `request` with the context attributes: `request_id` = `id`, the others computed when read. */
function inContext(request: FwRequest, id: string): FwRequest {
  return request.withAttributes({ request_id: id }, COMPUTED)
}

/**
 * `inner` (the kernel's pipeline, which never throws) run in the request context.
 * @example
 * const entry = withContext(pipeline, rescue, kernel.env === 'production')
 */
export function withContext(inner: Step, rescue: Rescue, redirectToHttps: boolean): Step {
  return (request) => {
    let id: string
    let derived: FwRequest
    try {
      if (redirectToHttps && !request.isSecure()) return toHttps(request)
      id = requestIdFor(request)
      derived = inContext(request, id)
    } catch (error) {
      return rescue(error, request)
    }
    const response = inner(derived)
    if (response instanceof Promise) return response.then((answered) => answered.withHeader('x-request-id', id))
    return response.withHeader('x-request-id', id)
  }
}

/** The same context as one middleware layer. */
export const requestContext: Middleware = (request, next) => {
  const id = requestIdFor(request)
  return next(inContext(request, id)).then((response: FwResponse) => response.withHeader('x-request-id', id))
}
