/**
 * Scheme, host and port, honouring X-Forwarded-Proto/-Host/-Port only when the socket peer is a
 * trusted proxy (DESIGN "Proxies"). Every header here is client input: parsed by hand or with
 * linear regexes, and rejected rather than repaired.
 */
import { isIPv4, isIPv6 } from 'node:net'
import { badRequest } from '../http-error.js'
import { lastOf, valuesOf, type HeaderBag } from './headers.js'
import type { TrustFunction } from './options.js'

/** What the socket tells us, independent of headers. */
export interface Peer {
  /** The socket peer address (may be `::ffff:`-mapped IPv4). */
  readonly remoteAddress: string | undefined
  readonly remotePort: number | undefined
  /** TLS on the socket (or an `https:` URL for web and test requests). */
  readonly encrypted: boolean
  readonly localAddress: string | undefined
  readonly localPort: number | undefined
  /**
   * A Unix domain socket (a server listening on a path, as behind nginx's `proxy_pass
   * http://unix:/run/app.sock`): the peer, a process on this machine, has no address.
   */
  readonly unixSocket?: boolean
}

/** A copy of `peer` with another `encrypted` (read field by field: a peer may use getters). */
export function withEncryption(peer: Peer, encrypted: boolean): Peer {
  const { remoteAddress, remotePort, localAddress, localPort, unixSocket } = peer
  return { remoteAddress, remotePort, encrypted, localAddress, localPort, unixSocket }
}

export interface Authority {
  readonly host: string
  readonly port: number | null
}

// A bracketed IPv6 literal or a registered name / IPv4 (dot-separated labels, none empty; the
// trailing dot of a fully qualified name is no part of the host), then an optional port, which
// may be empty: `host:` is the scheme's default port (RFC 3986 §3.2.3). Labels cannot contain a
// dot and the port part cannot contain a label character, so matching stays linear.
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\.?(?::(\d{0,5}))?$/
const SCHEMES = new Set(['http', 'https'])

/**
 * Whether the socket peer is a proxy whose X-Forwarded-* headers we believe. A Unix domain socket
 * peer, which has no address, is a process on this machine: trusted as loopback is (when the
 * trust takes 127.0.0.1). Untrusted, a proxy in front of the socket gave every client the address
 * '' (one throttle budget for all) and its X-Forwarded-Proto was ignored (in production, every
 * request redirected to https again).
 */
export function isTrustedPeer(peer: Peer, trust: TrustFunction): boolean {
  const address = peer.remoteAddress // a getter on Node peers: read it once
  if (address !== undefined && address !== '') return trust(address, 0)
  return peer.unixSocket === true && trust(UNIX_SOCKET_PEER, 0)
}

/** The address a Unix domain socket peer is trusted as: loopback. */
export const UNIX_SOCKET_PEER = '127.0.0.1'

/**
 * The last value of a forwarded header. A proxy that appends puts its own value last; anything
 * before it came from further away (possibly the client), so the last one is the one our trusted
 * peer vouches for. `name` is lowercase.
 */
export function lastForwarded(headers: HeaderBag, name: string): string | undefined {
  // The last element of all field lines joined with ',' is the last element of the last line.
  const line = lastOf(headers, name)
  if (line === undefined) return undefined
  // indexOf first: lastIndexOf is a call into the runtime, several times slower.
  const last = line.indexOf(',') === -1 ? line : line.slice(line.lastIndexOf(',') + 1)
  const value = last.trim()
  return value === '' ? undefined : value
}

/** 'https' or 'http'. */
export function resolveScheme(headers: HeaderBag, peer: Peer, trusted: boolean): 'http' | 'https' {
  if (trusted) {
    const forwarded = lastForwarded(headers, 'x-forwarded-proto')
    if (forwarded === 'https' || forwarded === 'http') return forwarded
    const proto = forwarded?.toLowerCase()
    if (proto !== undefined && SCHEMES.has(proto)) return proto as 'http' | 'https'
  }
  return peer.encrypted ? 'https' : 'http'
}

/**
 * Host (lowercase, no port) and the port the client named, if any: X-Forwarded-Host from a
 * trusted proxy, else the authority of an absolute-form target (`GET http://host/path`, which
 * RFC 9112 §3.2.2 puts before Host), else Host, else the local address (HTTP/1.0 without Host).
 * A request that names its host wrongly (Host twice, or a value that is not `host[:port]`) is a
 * 400 (RFC 9112 §3.2): guessing could route it to another tenant than a proxy in front saw.
 */
export function resolveAuthority(
  headers: HeaderBag,
  peer: Peer,
  trusted: boolean,
  /** The request target, or the `scheme://host` standing for it (RequestState.origin). */
  target: string,
): Authority {
  // Host is checked even when the target or a proxy names the host instead: §3.2 refuses such a
  // message outright, and a front end that read the other Host line may have routed it elsewhere.
  const host = hostHeader(headers)
  const forwarded = trusted ? forwardedHost(headers) : null
  const authority = forwarded ?? targetAuthority(target) ?? host ?? localAuthority(peer)
  const port = trusted ? parsePort(lastForwarded(headers, 'x-forwarded-port')) : null
  return port === null ? authority : { host: authority.host, port }
}

/**
 * X-Forwarded-Host from a trusted proxy, or null when it sent none. One it sent that names no
 * host is a 400, as such a Host is: falling back to Host could route the request to another
 * tenant than the proxy saw.
 */
function forwardedHost(headers: HeaderBag): Authority | null {
  if (lastOf(headers, 'x-forwarded-host') === undefined) return null
  // An empty last entry (`acme.example.com, `) names no host either.
  const authority = parseHost(lastForwarded(headers, 'x-forwarded-host'))
  if (authority === null) throw badRequest('Invalid X-Forwarded-Host header')
  return authority
}

function hostHeader(headers: HeaderBag): Authority | null {
  const values = valuesOf(headers, 'host')
  if (values.length === 0) return null
  const authority = values.length === 1 ? parseHost(values[0]) : null
  if (authority === null)
    throw badRequest(values.length === 1 ? 'Invalid Host header' : 'More than one Host header')
  return authority
}

// `scheme://authority` at the start of an absolute-form target (`http://host:8080/path`, as sent
// to proxies); the authority is group 1. The one parser of that form: path, host and URI all use it.
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/

/** `scheme://authority` that begins an absolute-form target, or null (origin form, `/path`). */
function absoluteForm(target: string): RegExpExecArray | null {
  return target.charCodeAt(0) === 47 ? null : ABSOLUTE_FORM.exec(target)
}

/** Whether `target` is an absolute URI (`https://host/path`) rather than a path. */
export function isAbsoluteForm(target: string): boolean {
  return absoluteForm(target) !== null
}

/** `scheme://host[:port]` of an absolute URL (undefined when it has no host). */
export function originOf(url: URL): string | undefined {
  return url.host === '' ? undefined : `${url.protocol}//${url.host}`
}

/** The authority of an absolute-form target; null for the origin form every client sends. */
function targetAuthority(target: string): Authority | null {
  const match = absoluteForm(target)
  if (match === null) return null
  const authority = parseHost(match[1])
  if (authority === null) throw badRequest('Invalid host in the request target')
  return authority
}

/** The port in use: the named one, else the scheme's default. */
export function effectivePort(authority: Authority, scheme: string): number {
  return authority.port ?? (scheme === 'https' ? 443 : 80)
}

/** `scheme://host[:port]`, the port only when it is not the scheme's default. */
export function schemeAndHost(scheme: string, authority: Authority): string {
  const port = effectivePort(authority, scheme)
  const isDefault = port === (scheme === 'https' ? 443 : 80)
  return `${scheme}://${authority.host}${isDefault ? '' : `:${port}`}`
}

/** Parses `host[:port]`; null for anything that is not a plain host. */
export function parseHost(value: string | undefined): Authority | null {
  if (value === undefined) return null
  const match = HOST.exec(value.trim())
  if (match === null) return null
  const written = match[2] === undefined || match[2] === '' ? undefined : match[2]
  const port = written === undefined ? null : parsePort(written)
  if (written !== undefined && port === null) return null
  const host = match[1]!
  return isUrlHost(host) ? { host: host.toLowerCase(), port } : null
}

// A last label that is a number: URL parsers (browsers, `new URL`) read such a name as IPv4.
const ENDS_IN_NUMBER = /(?:^|\.)\d+$/

/**
 * Whether `host` (as HOST matched it) is a host a URL can hold. Brackets hold an IPv6 address,
 * and a name ending in a number is IPv4 (`127.1` too): `[.]` or `999.999.999.999` made getUri()
 * and the HTTPS redirect's Location URLs that no client can follow. Most names end in a letter:
 * one character test.
 */
function isUrlHost(host: string): boolean {
  if (host.charCodeAt(0) === 91) return isIPv6(host.slice(1, -1))
  const last = host.charCodeAt(host.length - 1)
  if (last < 48 || last > 57 || !ENDS_IN_NUMBER.test(host) || isIPv4(host)) return true
  return URL.canParse(`http://${host}/`)
}

function parsePort(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,5}$/.test(value)) return null
  const port = Number(value)
  return port >= 1 && port <= 65535 ? port : null
}

/** No usable Host header (HTTP/1.0): the address the socket was accepted on. */
function localAuthority(peer: Peer): Authority {
  // A server listening on `::` sees IPv4 as `::ffff:127.0.0.1`: named as getClientAddress() does.
  const address = unmapAddress(peer.localAddress)
  if (address === undefined || address === '') return { host: 'localhost', port: null }
  const host = address.includes(':') ? `[${address}]` : address
  return { host: host.toLowerCase(), port: peer.localPort ?? null }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses unchanged. */
export function unmapAddress(address: string | undefined): string | undefined {
  // Only a mapped address starts with ':' (IPv4 never does): skip the lowercase copy otherwise.
  if (address === undefined || address.charCodeAt(0) !== 58) return address
  return address.toLowerCase().startsWith('::ffff:') && address.includes('.')
    ? address.slice(7)
    : address
}

/** The raw path of a request target: `splitTarget(target).path`, without building the pair. */
export function pathOf(target: string): string {
  // Origin form without query or fragment (most requests): the target is the path. Two indexOf
  // calls cost less than one charCodeAt loop over a path of usual length (callgrind: 3x less).
  if (target.charCodeAt(0) === 47 && target.indexOf('?') === -1 && target.indexOf('#') === -1)
    return target
  return splitTarget(target).path
}

/** Splits a request target into its raw path and query string (a fragment is dropped). */
export function splitTarget(target: string): { path: string; query: string } {
  // Absolute form (`GET http://host/path`, sent to proxies): keep only the path.
  const absolute = absoluteForm(target)
  let rest = absolute === null ? target : target.slice(absolute[0].length)
  const hash = rest.indexOf('#')
  if (hash !== -1) rest = rest.slice(0, hash)
  const question = rest.indexOf('?')
  const path = question === -1 ? rest : rest.slice(0, question)
  return { path: path === '' ? '/' : path, query: question === -1 ? '' : rest.slice(question + 1) }
}
