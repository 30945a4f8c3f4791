/**
 * Sets `client_ip`: the socket peer, or the address X-Forwarded-For names when the peer (and each
 * hop, read right to left) is a trusted proxy. proxy-addr's semantics; `::ffff:1.2.3.4` is 1.2.3.4;
 * an entry's port and IPv6 brackets are dropped (`1.2.3.4:5678`, `[2001:db8::1]:4711`); an entry
 * that is not an IP address is never the client (the hop that passed it on is). At most the 32
 * nearest hops are read.
 */
import { isIP } from 'node:net'
import proxyaddr from 'proxy-addr'
import type { FwRequest } from '../request/request.js'
import { UNIX_SOCKET_PEER, unmapAddress } from '../request/uri.js'
import type { Middleware } from '../types.js'

// proxy-addr parses each hop it asks about (~14 µs for '::1'): 3,000 trusted hops in a 12 KB
// header cost ~40 ms a request. Only the nearest 32 are read; past them the 32nd is the client.
const MAX_HOPS = 32

/** The client's address: the peer, or what X-Forwarded-For says through trusted proxies. */
export function clientAddress(request: FwRequest): string {
  const forwarded = request.getHeaderLine('x-forwarded-for')
  const peer = request.getClientAddress()
  // getClientAddress() is already unmapped; a forwarded address may still be ::ffff:-mapped.
  if (forwarded === '') return peer
  // Checked only for a long header: a short one cannot hold more than MAX_HOPS addresses.
  const nearest = forwarded.length > 4 * MAX_HOPS ? nearestHops(forwarded) : forwarded
  const hops = WITH_PORT.test(nearest) ? withoutPorts(nearest) : nearest
  // A Unix domain socket peer has no address: trusted, it is walked as loopback (isTrustedPeer).
  const socket = peer === '' && request.isFromTrustedProxy() ? UNIX_SOCKET_PEER : peer
  const reqLike = { socket: { remoteAddress: socket }, headers: { 'x-forwarded-for': hops } }
  // [peer, hops right to left ..., the first untrusted one]. A trusted proxy may still pass on
  // what is not an address ("<script>", "unknown"): then the last hop that is one is the client.
  const chain = proxyaddr.all(reqLike as never, request.getTrustProxy())
  for (let i = chain.length - 1; i > 0; i--) {
    const address = unmapAddress(chain[i]!)!
    if (isIP(address) !== 0) return address
  }
  return peer
}

// An entry with a port: `[2001:db8::1]:4711` (or just bracketed), or `1.2.3.4:5678` (Azure's
// front ends send these). proxy-addr reads neither as an address, so the client, and any trusted
// hop so written, fell back to the peer: every client behind such a proxy shared its address
// (and its throttle budget). Linear: a digit run, a dot, a digit run, then ':'.
const WITH_PORT = /\[|\d\.\d+:/
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/

/** Each entry of a comma-separated list without its port or IPv6 brackets. */
function withoutPorts(forwarded: string): string {
  return forwarded.split(',').map(withoutPort).join(',')
}

function withoutPort(entry: string): string {
  const hop = entry.trim()
  if (hop.charCodeAt(0) === 91) {
    const close = hop.indexOf(']')
    return close === -1 ? hop : hop.slice(1, close)
  }
  return IPV4_WITH_PORT.exec(hop)?.[1] ?? hop
}

/** The last MAX_HOPS entries of a comma-separated list. */
function nearestHops(forwarded: string): string {
  let at = forwarded.length
  for (let i = 0; i < MAX_HOPS && at > 0; i++) at = forwarded.lastIndexOf(',', at - 1)
  return at > 0 ? forwarded.slice(at + 1) : forwarded
}

/** Uses the request's own proxy trust (the kernel's `request.trustProxy`, TRUSTED_PROXIES by default). */
export const clientIp: Middleware = (request, next) =>
  next(request.withAttribute('client_ip', clientAddress(request)))
