/**
 * CORS in the kernel (the `cors` option, see cors-policy.ts): one layer around everything after
 * the built-ins, the global middleware included. It answers preflights before any guard (a
 * preflight carries no credentials, so an auth layer would refuse it), and it sees every
 * response, also the 401, 404, 405, 429 and 500 of guards and the error boundary, which a browser
 * would otherwise hide from the app. Off (no `cors`), the kernel leaves it out: no cost.
 */
import type { HeaderMap } from '../http-error.js'
import type { Rescue, Step } from '../pipeline.js'
import type { FwRequest } from '../request/request.js'
import { FwResponse } from '../response.js'
import { TOKEN } from '../request/headers.js'
import { withVary } from '../vary.js'
import type { CorsPolicy } from './cors-policy.js'

export { corsPolicy, type CorsOptions, type CorsOrigin, type CorsPolicy } from './cors-policy.js'

// A token list as browsers send Access-Control-Request-Headers: anything else is not reflected.
const TOKEN_CHARS = TOKEN.source.slice(1, -1)
const TOKEN_LIST = new RegExp(`^${TOKEN_CHARS}(?:[ \\t]*,[ \\t]*${TOKEN_CHARS})*$`)
// No method of a route: the router's miss then lists every method of the path (its 405).
const ANY_METHOD = 'cors-preflight'
const ORIGIN = ['Origin']

/**
 * `inner` (the kernel's pipeline, which never rejects) with CORS: a preflight from an allowed
 * origin to a path that exists is answered here (204); every other response in scope gets the
 * headers of its origin. A request with no Origin header is answered as without CORS, but for
 * `Vary: Origin` (a shared cache must not give its answer to a cross-origin request).
 * @example
 * const step = withCors(pipeline, policy, (request, probe) => pathMethods(request, probe), rescue)
 */
export function withCors(
  inner: Step,
  policy: CorsPolicy,
  methodsOf: (request: FwRequest, probe: string) => readonly string[] | null,
  rescue: Rescue,
): Step {
  return (request) => {
    let allowed: string | null
    // What throws here (an origin function, a Host no URL can hold) is the boundary's to answer:
    // the built-ins around this step take a response, never a throw.
    try {
      if (!policy.inScope(request.getPath())) return inner(request)
      const origin = request.getHeaderLine('origin')
      allowed = policy.allow(origin, request)
      // A preflight has an Origin (Fetch §4.8); without one, '*' still allows: a plain OPTIONS.
      if (
        allowed !== null &&
        origin !== '' &&
        request.getOriginalMethod() === 'OPTIONS' &&
        request.hasHeader('access-control-request-method')
      ) {
        const methods = methodsOf(request, ANY_METHOD)
        // A path no route has: its 404 (with the headers), as without CORS.
        if (methods !== null) return preflight(request, policy, allowed, methods)
      }
    } catch (error) {
      return rescue(error, request)
    }
    const response = inner(request)
    return response instanceof Promise
      ? response.then((answered) => withHeaders(answered, policy, allowed))
      : withHeaders(response, policy, allowed)
  }
}

function withHeaders(response: FwResponse, policy: CorsPolicy, allowed: string | null): FwResponse {
  const answer =
    allowed === null
      ? response
      : response.withHeaders({ ...policy.actual, 'access-control-allow-origin': allowed })
  return policy.vary ? withVary(answer, ORIGIN) : answer
}

function preflight(
  request: FwRequest,
  policy: CorsPolicy,
  allowed: string,
  methods: readonly string[],
): FwResponse {
  const headers: HeaderMap = {
    'access-control-allow-origin': allowed,
    'access-control-allow-methods': policy.methods ?? methods.join(', '),
    ...policy.preflight,
  }
  const vary = policy.vary ? ['Origin'] : []
  if (!('access-control-allow-headers' in headers)) {
    // Reflected, as @fastify/cors does: the answer then depends on the header asked.
    vary.push('Access-Control-Request-Headers')
    const asked = request.getHeaderLine('access-control-request-headers')
    if (TOKEN_LIST.test(asked)) headers['access-control-allow-headers'] = asked
  }
  if (vary.length > 0) headers.vary = vary.join(', ')
  return new FwResponse(204, headers)
}
