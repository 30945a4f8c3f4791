/**
 * Sets `client_ip`: the socket peer, or the address X-Forwarded-For names when the peer (and each
 * hop, read right to left) is a trusted proxy. proxy-addr's semantics; `::ffff:1.2.3.4` is 1.2.3.4.
 */
import proxyaddr from 'proxy-addr'
import type { FwRequest } from '../request/request.js'
import { unmapAddress } from '../request/uri.js'
import type { Middleware } from '../types.js'

/** The client's address: the peer, or what X-Forwarded-For says through trusted proxies. */
export function clientAddress(request: FwRequest): string {
  const forwarded = request.getHeaderLine('x-forwarded-for')
  const peer = request.getClientAddress()
  // getClientAddress() is already unmapped; a forwarded address may still be ::ffff:-mapped.
  if (forwarded === '') return peer
  const reqLike = { socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': forwarded } }
  return unmapAddress(proxyaddr(reqLike as never, request.getTrustProxy()))!
}

/** Uses the request's own proxy trust (the kernel's `request.trustProxy`, TRUSTED_PROXIES by default). */
export const clientIp: Middleware = (request, next) => next(request.withAttribute('client_ip', clientAddress(request)))
