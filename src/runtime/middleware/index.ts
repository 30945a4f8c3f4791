/** The built-in middleware: always-on pre-global ones, and the aliases the kernel implements. */
import type { Kernel } from '../kernel.js'
import type { Middleware, MiddlewareFactory } from '../types.js'
import { clientIp, compileTrust } from './client-ip.js'
import { httpsRedirect } from './https-redirect.js'
import { negotiate } from './negotiate.js'
import { requestId } from './request-id.js'
import { trace } from './trace.js'

/** client_ip, request_id, trace — and in production the HTTPS redirect. */
export function defaultPreGlobal(kernel: Kernel): Middleware[] {
  const always = [clientIp(compileTrust()), requestId, trace]
  return kernel.env === 'production' ? [httpsRedirect, ...always] : always
}

/** Aliases implemented by the runtime itself; auth, role and throttle come from their modules. */
export function builtinFactories(kernel: Kernel): Record<string, MiddlewareFactory> {
  return {
    negotiate: () => negotiate(),
    verifySignedUrl: () => (request, next) => {
      kernel.signer.verify(request)
      return next(request)
    },
  }
}

export { clientIp, compileTrust, httpsRedirect, negotiate, requestId, trace }
