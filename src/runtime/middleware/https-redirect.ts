/**
 * In production, a request that is not secure (X-Forwarded-Proto from a trusted proxy counts) is
 * redirected with 301 to the https form of the same host and path (spec hardening rule 7).
 */
import { redirect } from '../response.js'
import type { Middleware } from '../types.js'

export const httpsRedirect: Middleware = (request, next) => {
  if (request.isSecure()) return next(request)
  const query = request.getQueryString()
  return redirect(`https://${request.getHost()}${request.getPath()}${query ? `?${query}` : ''}`, 301)
}
