/**
 * In production, a request that is not secure (X-Forwarded-Proto from a trusted proxy counts) is
 * redirected with 301 to the https form of the same host and path (spec hardening rule 7).
 */
import type { FwRequest } from '../request/request.js'
import { redirect, type FwResponse } from '../response.js'
import type { Middleware } from '../types.js'

/**
 * The 301 to the https form of `request`'s URL. A target that is no path, the asterisk form of
 * `OPTIONS *` (about the whole server), has no URL: it goes to the https server's root.
 */
export function toHttps(request: FwRequest): FwResponse {
  const path = request.getPath()
  if (!path.startsWith('/')) return redirect(`https://${request.getHost()}/`, 301)
  const query = request.getQueryString()
  return redirect(`https://${request.getHost()}${path}${query ? `?${query}` : ''}`, 301)
}

export const httpsRedirect: Middleware = (request, next) =>
  request.isSecure() ? next(request) : toHttps(request)
