/**
 * Sets `client_ip`: the socket peer, or the address X-Forwarded-For names when the peer (and each
 * hop, read right to left) is a trusted proxy. proxy-addr's semantics; `::ffff:1.2.3.4` is 1.2.3.4.
 */
import proxyaddr from 'proxy-addr'
import type { Middleware } from '../types.js'

export type TrustFn = (address: string, hop: number) => boolean

/** Trust for TRUSTED_PROXIES (comma-separated addresses, CIDRs or proxy-addr names); default loopback. */
export function compileTrust(spec: string | undefined = process.env.TRUSTED_PROXIES): TrustFn {
  const list = (spec ?? 'loopback').split(',').map((s) => s.trim()).filter(Boolean)
  return proxyaddr.compile(list)
}

export function unmapIPv4(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}

export function clientIp(trust: TrustFn): Middleware {
  return (request, next) => {
    const forwarded = request.getHeaderLine('x-forwarded-for')
    const peer = request.getClientAddress()
    const ip = forwarded === '' ? peer : proxyaddr({ socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': forwarded } } as never, trust)
    return next(request.withAttribute('client_ip', unmapIPv4(ip)))
  }
}
