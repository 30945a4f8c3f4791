/**
 * The always-on request context: `client_ip`, `request_id` (echoed as X-Request-Id) and
 * `trace.trace_id`, plus the production HTTPS redirect before them and Strict-Transport-Security
 * on the secure responses. The kernel wraps its whole pipeline in `withContext` rather than
 * running these as middleware layers: no `next` promise, no guard, and a response answered
 * synchronously stays synchronous. The separate middleware (clientIp, requestId, trace,
 * httpsRedirect) remain for apps that turn builtins off.
 */
import {
  finishLater,
  type Entry,
  type Failed,
  type Finish,
  type Rescue,
  type Step,
} from '../pipeline.js'
import type { FwRequest } from '../request/request.js'
import type { FwResponse } from '../response.js'
import type { Middleware } from '../types.js'
import { clientAddress } from './client-ip.js'
import { toHttps, withHsts } from './https-redirect.js'
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
 * The request id the node adapter gave `request` already (its access log line's, see
 * access-log.ts), else `requestIdFor`'s.
 */
export function presetRequestId(request: FwRequest): string {
  const preset = request.getAttribute('request_id')
  return typeof preset === 'string' ? preset : requestIdFor(request)
}

/**
 * Production's rules for the scheme: a request that is not secure is redirected to https, and
 * the responses to secure ones carry Strict-Transport-Security `hsts` (null: none).
 */
export interface HttpsPolicy {
  hsts: string | null
}

/**
 * `inner` (the kernel's pipeline, which never rejects) run in the request context, as an entry:
 * the response, with its X-Request-Id, goes to `finish` in the same reaction that awaits the
 * pipeline (no promise just to add the header). `https` (production) redirects plain http and
 * adds HSTS to secure responses; null, neither. `idFor` chooses the request id.
 * @example
 * const entry = withContext(pipeline, rescue, production ? { hsts: 'max-age=15552000' } : null)
 */
export function withContext(
  inner: Step,
  rescue: Rescue,
  https: HttpsPolicy | null,
  idFor: (request: FwRequest) => string = requestIdFor,
): Entry {
  return (request, context, finish, failed) => {
    let id = ''
    let derived: FwRequest | undefined
    // Only on a secure response (RFC 6797 §7.2: never over plain http), once it is known secure.
    let hsts: string | null = null
    try {
      id = idFor(request)
      derived = inContext(request, id)
      if (https !== null) {
        // The redirect carries the request id too: a proxy's log line and ours stay joined up.
        if (!request.isSecure())
          return finish(toHttps(request).withHeader('x-request-id', id), request, context)
        hsts = https.hsts
      }
    } catch (error) {
      const rescued = rescue(error, derived ?? request)
      if (id === '') return finishLater(rescued, request, context, finish, failed)
      return finishWithId(rescued, id, hsts, request, context, finish, failed)
    }
    const response = inner(derived)
    if (response instanceof Promise)
      return finishWithId(response, id, hsts, request, context, finish, failed)
    return finish(stamped(response, id, hsts), request, context)
  }
}

/** `response` with its X-Request-Id, and HSTS when `hsts` is given (and it has none of its own). */
function stamped(response: FwResponse, id: string, hsts: string | null): FwResponse {
  return (hsts === null ? response : withHsts(response, hsts)).withHeader('x-request-id', id)
}

// Apart from the entry, so that only a request answered later allocates the closures (and the
// context they share).
function finishWithId<C, T>(
  response: Promise<FwResponse>,
  id: string,
  hsts: string | null,
  request: FwRequest,
  context: C,
  finish: Finish<C, T>,
  failed: Failed<C, T>,
): Promise<T> {
  return response.then(
    (answered) => finish(stamped(answered, id, hsts), request, context),
    (error: unknown) => failed(error, request, context),
  )
}

/** The same context as one middleware layer. */
export const requestContext: Middleware = (request, next) => {
  const id = requestIdFor(request)
  return next(inContext(request, id)).then((response: FwResponse) =>
    response.withHeader('x-request-id', id),
  )
}
