/**
 * Sets `client_ip`: the socket peer, or the address X-Forwarded-For names when the peer (and each
 * hop, read right to left) is a trusted proxy. proxy-addr's semantics; `::ffff:1.2.3.4` is 1.2.3.4;
 * an entry that is not an IP address is never the client (the hop that passed it on is).
 */
import { isIP } from 'node:net'
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
  // [peer, hops right to left ..., the first untrusted one]. A trusted proxy may still pass on
  // what is not an address ("<script>", "unknown"): then the last hop that is one is the client.
  const chain = proxyaddr.all(reqLike as never, request.getTrustProxy())
  for (let i = chain.length - 1; i > 0; i--) {
    const address = unmapAddress(chain[i]!)!
    if (isIP(address) !== 0) return address
  }
  return peer
}

/** Uses the request's own proxy trust (the kernel's `request.trustProxy`, TRUSTED_PROXIES by default). */
export const clientIp: Middleware = (request, next) =>
  next(request.withAttribute('client_ip', clientAddress(request)))
