/**
 * Sets `client_ip`: the socket peer, or the address X-Forwarded-For names when the peer (and each
 * hop, read right to left) is a trusted proxy. proxy-addr's semantics; `::ffff:1.2.3.4` is 1.2.3.4.
 */
import proxyaddr from 'proxy-addr'
import type { Middleware } from '../types.js'

export function unmapIPv4(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}

/** Uses the request's own proxy trust (the kernel's `request.trustProxy`, TRUSTED_PROXIES by default). */
export const clientIp: Middleware = (request, next) => {
  const forwarded = request.getHeaderLine('x-forwarded-for')
  const peer = request.getClientAddress()
  const ip =
    forwarded === ''
      ? peer
      : proxyaddr({ socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': forwarded } } as never, request.getTrustProxy())
  return next(request.withAttribute('client_ip', unmapIPv4(ip)))
}
