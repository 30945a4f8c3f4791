/** The built-in middleware: always-on pre-global ones, and the aliases the kernel implements. */
import type { Kernel } from '../kernel.js'
import type { MiddlewareFactory } from '../types.js'
import { clientIp } from './client-ip.js'
import { requestContext } from './context.js'
import { httpsRedirect } from './https-redirect.js'
import { negotiate, negotiateAlias } from './negotiate.js'
import { requestId } from './request-id.js'
import { trace } from './trace.js'

/** Aliases implemented by the runtime itself; auth, role and throttle come from their modules. */
export function builtinFactories(kernel: Kernel): Record<string, MiddlewareFactory> {
  return {
    negotiate: (params) => negotiateAlias(params),
    verifySignedUrl: () => {
      // Built at boot: a production kernel without signing keys fails to start, not per request.
      const signer = kernel.signer
      return (request, next) => {
        signer.verify(request)
        return next(request)
      }
    },
  }
}

export { clientIp, httpsRedirect, negotiate, requestContext, requestId, trace }
