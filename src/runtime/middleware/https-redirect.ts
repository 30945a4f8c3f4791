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
  if (!path.startsWith('/')) return redirect(`https://${request.getHost()}/`, 301, CACHING)
  const query = request.getQueryString()
  return redirect(`https://${request.getHost()}${path}${query ? `?${query}` : ''}`, 301, CACHING)
}

// What caches may do with the 301. Its Location comes from X-Forwarded-Proto and -Host (from a
// trusted proxy), which the URL does not show (RFC 9110 §12.5.5), and a 301 without an expiry is
// heuristically cacheable: a shared cache behind the TLS proxy gave it to https requests too,
// each sent to itself, and a caching proxy that passes the client's X-Forwarded-Host on (nginx
// does unless told otherwise) served every client a redirect to the host one client named.
// Private: browsers only, and for an hour, since they keep a 301 without an expiry for ever, also
// one that a misconfigured TRUSTED_PROXIES sent from an https URL to itself.
// Strict-Transport-Security is the lasting way to keep clients on https.
const CACHING = {
  vary: 'X-Forwarded-Proto, X-Forwarded-Host',
  'cache-control': 'private, max-age=3600',
}

export const httpsRedirect: Middleware = (request, next) =>
  request.isSecure() ? next(request) : toHttps(request)
