/** Request options with defaults applied, resolved once per options object. */
import { tmpdir } from 'node:os'
import proxyaddr from 'proxy-addr'
import { FwError } from '../../shared/errors.js'
import { checkOptions, optionNames } from '../../shared/option-names.js'
import { DEFAULT_BODY_LIMITS, type BodyLimits, type RequestOptions } from '../types.js'

export type TrustFunction = (address: string, hop: number) => boolean

export interface ResolvedOptions {
  readonly trustProxy: TrustFunction
  readonly limits: BodyLimits
  readonly uploadDir: string
}

/**
 * A trust function for `RequestOptions.trustProxy` from addresses, CIDRs or proxy-addr names
 * (the `TRUSTED_PROXIES` setting: a list or a comma-separated string). Empty means loopback; an
 * entry that is none of these is a FW_SERVE_CONFIG error.
 * @example
 * FwRequest.fromNode(req, { trustProxy: compileTrust(process.env.TRUSTED_PROXIES) })
 */
export function compileTrust(addresses: string | readonly string[] = []): TrustFunction {
  const list = typeof addresses === 'string' ? addresses.split(',') : addresses
  const given = list.map((a) => a.trim()).filter((a) => a !== '')
  try {
    return remember(proxyaddr.compile(given.length > 0 ? given : ['loopback']))
  } catch (error) {
    // proxy-addr names the entry ("invalid IP address: foo"); uncaught, fw serve called it a bug.
    throw new FwError('FW_SERVE_CONFIG', `TRUSTED_PROXIES: ${(error as Error).message}`, {
      hint: 'List addresses, CIDR ranges (10.0.0.0/8; prefix 1+) or loopback, linklocal, uniquelocal.',
      cause: error,
    })
  }
}

/**
 * Caches trust decisions for socket peers: proxy-addr parses the address on every call (~2 µs),
 * and a server sees the same few peers (its proxies) again and again.
 */
function remember(trust: TrustFunction): TrustFunction {
  // Only hop 0 (the socket peer, asked on every request) is cached, so no key string is built;
  // further hops come from X-Forwarded-For, client input that must not grow the cache.
  const known = new Map<string, boolean>()
  return (address, hop) => {
    if (hop !== 0) return trust(address, hop)
    let answer = known.get(address)
    if (answer === undefined) {
      answer = trust(address, 0)
      if (known.size >= 1024) known.clear()
      known.set(address, answer)
    }
    return answer
  }
}

const REQUEST_OPTIONS = optionNames<RequestOptions>({ trustProxy: 1, limits: 1, uploadDir: 1 })

/**
 * Refuses an option name RequestOptions (or its `limits`) does not have, where the options are
 * given (at boot, in FwRequest.create), not per request.
 * @example
 * checkRequestOptions('Kernel.boot() request', { limit: { body: 1e6 } }) // TypeError: ... did you mean `limits`?
 */
export function checkRequestOptions(
  where: string,
  options: RequestOptions | undefined,
  fail?: (message: string) => Error,
): void {
  checkOptions(where, options, REQUEST_OPTIONS, fail)
  checkOptions(`${where}.limits`, options?.limits, Object.keys(DEFAULT_BODY_LIMITS), fail)
}

const DEFAULTS: ResolvedOptions = {
  trustProxy: compileTrust(),
  limits: DEFAULT_BODY_LIMITS,
  uploadDir: tmpdir(),
}

// The kernel passes the same options object for every request; merge it only once.
const resolved = new WeakMap<RequestOptions, ResolvedOptions>()

/** `options` with defaults filled in (cached per object). */
export function resolveOptions(options: RequestOptions | undefined): ResolvedOptions {
  if (options === undefined) return DEFAULTS
  let result = resolved.get(options)
  if (result === undefined) {
    result = {
      trustProxy: options.trustProxy ?? DEFAULTS.trustProxy,
      limits: { ...DEFAULT_BODY_LIMITS, ...options.limits },
      uploadDir: options.uploadDir ?? DEFAULTS.uploadDir,
    }
    resolved.set(options, result)
  }
  return result
}
