/**
 * In production, a request that is not secure (X-Forwarded-Proto from a trusted proxy counts) is
 * redirected with 301 to the https form of the same host and path (spec hardening rule 7), and a
 * response to a secure one says Strict-Transport-Security (RFC 6797), so that the browser asks
 * for https itself from then on, before any plain-http request can be intercepted.
 */
import { FwError } from '../../shared/errors.js'
import { checkOptions, optionNames } from '../../shared/option-names.js'
import { shownValue } from '../../shared/shown-value.js'
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

/** Kernel option `hsts`: the Strict-Transport-Security that production's https responses carry. */
export interface HstsOptions {
  /** How long the browser keeps to https, in seconds. Default 15552000 (180 days); 0 ends it. */
  maxAge?: number | undefined
  /**
   * Every subdomain too. Default false: a subdomain still served over plain http (an intranet
   * host, a legacy app) would stop loading in every browser that visited this app, for maxAge.
   */
  includeSubDomains?: boolean | undefined
  /** Ask to be on the browsers' built-in list (hstspreload.org): needs includeSubDomains and a maxAge of a year. */
  preload?: boolean | undefined
}

/** 180 days, Helmet's default. */
export const HSTS_MAX_AGE = 15_552_000
/** hstspreload.org's least max-age: a year. */
export const HSTS_PRELOAD_MAX_AGE = 31_536_000

const HSTS_OPTIONS = optionNames<HstsOptions>({ maxAge: 1, includeSubDomains: 1, preload: 1 })
const STS = 'strict-transport-security'

/**
 * The Strict-Transport-Security value kernel option `hsts` asks for (`false` or unset: null,
 * none; `true`: the defaults), checked at boot: anything else is an FwError FW_SERVE_CONFIG.
 * Opt-in, as Django's SECURE_HSTS_SECONDS: a browser keeps it for maxAge, so a site that must go
 * back to plain http (a proxy misconfigured, a subdomain) cannot for months.
 * @example
 * hstsHeader(true) // 'max-age=15552000'
 * hstsHeader({ maxAge: 63072000, includeSubDomains: true, preload: true })
 * // 'max-age=63072000; includeSubDomains; preload'
 */
export function hstsHeader(option: unknown): string | null {
  if (option === false || option === undefined) return null
  if (option === true) return `max-age=${HSTS_MAX_AGE}`
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw hstsError(
      `hsts must be true, false or { maxAge, includeSubDomains, preload }, not ${shownValue(option)}`,
    )
  checkOptions('Kernel.boot() hsts', option, HSTS_OPTIONS, hstsError)
  const { maxAge = HSTS_MAX_AGE, includeSubDomains, preload } = option as HstsOptions
  if (!Number.isSafeInteger(maxAge) || maxAge < 0)
    throw hstsError(
      `hsts.maxAge must be a whole number of seconds, 0 or more, not ${shownValue(maxAge)}`,
    )
  const subdomains = flag('includeSubDomains', includeSubDomains)
  if (flag('preload', preload)) {
    // What hstspreload.org requires of a site it lists.
    if (!subdomains) throw hstsError('hsts.preload needs includeSubDomains: true (hstspreload.org)')
    if (maxAge < HSTS_PRELOAD_MAX_AGE)
      throw hstsError(
        `hsts.preload needs a maxAge of ${HSTS_PRELOAD_MAX_AGE} (a year) or more, not ${maxAge}${(option as HstsOptions).maxAge === undefined ? ' (the default)' : ''}`,
      )
    return `max-age=${maxAge}; includeSubDomains; preload`
  }
  return `max-age=${maxAge}${subdomains ? '; includeSubDomains' : ''}`
}

/** A boolean option's value, false when unset; anything else is refused. */
function flag(name: string, value: unknown): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true
  throw hstsError(`hsts.${name} must be true or false, not ${shownValue(value)}`)
}

function hstsError(message: string): FwError {
  return new FwError('FW_SERVE_CONFIG', message, {
    hint: 'Write hsts: true (max-age 15552000, 180 days), { maxAge: 31536000, includeSubDomains: true, preload: true }, or false.',
  })
}

/**
 * `response` with Strict-Transport-Security `value`, unless it says one already: a handler's
 * own (`max-age=0` to lift it) wins.
 * @example
 * withHsts(json({}), 'max-age=15552000').header('strict-transport-security') // 'max-age=15552000'
 */
export function withHsts(response: FwResponse, value: string): FwResponse {
  return response.hasHeader(STS) ? response : response.withHeader(STS, value)
}
