/**
 * Who a request counts against: the authenticated user when `auth.user_id` is set, else the
 * client address as the kernel resolved it (`client_ip`: X-Forwarded-For is only honoured from
 * trusted proxies there, so an untrusted header never reaches this file).
 *
 * IPv6 clients are bucketed by prefix (/64 by default): one subscriber usually holds a whole /64,
 * so per-address counting would let them rotate addresses freely. IPv4-mapped IPv6 addresses
 * (`::ffff:1.2.3.4`, also in hex form `::ffff:102:304`) are the IPv4 client they carry, each its
 * own bucket (express-rate-limit once bucketed all of them into `::/64`).
 */
import { isIPv4, isIPv6 } from 'node:net'
import type { FwRequest } from '../runtime/request/request.js'
import type { ThrottleOptions } from './middleware.js'

type IdentityOptions = Pick<ThrottleOptions, 'keyFn' | 'tenant' | 'ipv6Prefix'>

/**
 * The key's "who" part: custom key, else `u:<user id>`, else `ip:<address bucket>`; tenant first.
 * @example
 * identifier({})(request) // 'ip:203.0.113.9', or 'u:7' once `auth` has set auth.user_id = 7
 */
export function identifier(options: IdentityOptions): (request: FwRequest) => string {
  const prefix = checkPrefix(options.ipv6Prefix ?? 64)
  const tenantOf = typeof options.tenant === 'string' ? attribute(options.tenant) : options.tenant
  return (request) => {
    const custom = options.keyFn?.(request)
    const user = request.getAttribute('auth.user_id')
    // An empty key is no key (a missing header read with getHeaderLine): as `k:` it put every
    // client without one on a single counter, which one of them could exhaust for all.
    const who =
      custom != null && custom !== ''
        ? `k:${custom}`
        : user != null
          ? `u:${String(user)}`
          : `ip:${addressBucket(clientOf(request), prefix)}`
    const tenant = tenantOf?.(request)
    return tenant != null && tenant !== '' ? `t:${tenant}|${who}` : who
  }
}

/**
 * `client_ip`, else (a kernel with `builtins: false` and no clientIp middleware) the socket peer:
 * one shared 'unknown' would let one client's requests refuse every other client's.
 */
function clientOf(request: FwRequest): string {
  const address = request.getAttribute('client_ip')
  return address == null ? request.getClientAddress() : String(address)
}

// Out of range, every IPv6 client fell into one bucket ('::/-1') or a malformed one.
function checkPrefix(prefix: number): number {
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > 128)
    throw new RangeError(`ipv6Prefix must be an integer from 0 to 128, got ${prefix}`)
  return prefix
}

function attribute(name: string): (request: FwRequest) => string | null | undefined {
  return (request) => {
    const value = request.getAttribute(name)
    return value == null ? null : String(value)
  }
}

/**
 * The counting identity of an address: IPv4 as is, IPv4-mapped as IPv4, IPv6 as its prefix.
 * @example
 * addressBucket('2001:db8:1:2:3:4:5:6')  // '2001:db8:1:2::/64'
 * addressBucket('::ffff:203.0.113.9')     // '203.0.113.9'
 */
export function addressBucket(address: string, ipv6Prefix = 64): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (isIPv4(bare)) return bare
  const zoneless = bare.includes('%') ? bare.slice(0, bare.indexOf('%')) : bare
  if (!isIPv6(zoneless)) return bare
  const groups = expandIPv6(zoneless)
  if (isMappedIPv4(groups))
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`
  return ipv6Prefix >= 128
    ? formatIPv6(groups)
    : `${formatIPv6(maskGroups(groups, ipv6Prefix))}/${ipv6Prefix}`
}

/** Eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase()
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros =
    tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16))
}

function isMappedIPv4(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff
}

function maskGroups(groups: readonly number[], prefix: number): number[] {
  return groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefix - i * 16))
    return bits === 0 ? 0 : group & ((0xffff << (16 - bits)) & 0xffff)
  })
}

/** RFC 5952 text: lowercase, no leading zeros, the longest run (2+) of zero groups as `::`. */
function formatIPv6(groups: readonly number[]): string {
  let best = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) [best, bestLength] = [i, j - i]
    i = j === i ? i + 1 : j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best === -1) return hex.join(':')
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`
}
