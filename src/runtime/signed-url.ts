/**
 * Signed URLs. `_sig` is the hex HMAC-SHA256 of the path and the key-sorted, RFC 3986-encoded
 * query without `_sig` (so `_exp` is signed too): `path?query`, or the path alone when that query
 * is empty (as Laravel's rtrim of '?'); payloadMode `absolute` prefixes `scheme://host[:port]`,
 * and a route with a domain is signed with `//host` before its path in `relative` mode too.
 * One key signs; every configured key verifies (rotation).
 * Verification order (DESIGN.md): missing `_sig` 400, malformed `_exp` 400, no key matches 403,
 * expired 410.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { badRequest, forbidden, gone } from './http-error.js'
import { decodeComponent } from './request/query.js'
import type { FwRequest } from './request/request.js'
import type { UrlParams, UrlQuery } from './types.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

export type PayloadMode = 'relative' | 'absolute'

/** A well-formed `_exp`: Unix seconds, at most 12 digits (up to the year 33658). */
const EXPIRY = /^[0-9]{1,12}$/

type UrlFor = (
  name: string,
  params?: UrlParams,
  query?: UrlQuery,
  absolute?: boolean | string,
) => string

export interface UrlSignerOptions {
  /** The first key signs; all of them verify. */
  keys: readonly string[]
  urlFor: UrlFor
  now?: (() => number) | undefined
  /** What signing binds to when a call gives no payloadMode; default 'relative'. */
  payloadMode?: PayloadMode | undefined
  /**
   * Whether the named route answers on a domain of its own (`{account}.example.com`): its
   * signature then binds the host in `relative` mode too. Default: no route does.
   */
  hasDomain?: ((name: string) => boolean) | undefined
  /**
   * Whether `request` is routed to a route with a domain, named or not: verify() then takes only
   * a host-bound signature. Default: no request is.
   */
  routedToDomain?: ((request: FwRequest) => boolean) | undefined
}

const SIGNER_OPTIONS = optionNames<UrlSignerOptions>({
  keys: 1,
  urlFor: 1,
  now: 1,
  payloadMode: 1,
  hasDomain: 1,
  routedToDomain: 1,
})

/**
 * @example
 * const signer = new UrlSigner({ keys: [secret], urlFor })
 * signer.temporaryUrlFor('demo.signed', { id: 1 }, {}, 300) // '/demo/signed/1?_exp=...&_sig=...'
 */
export class UrlSigner {
  readonly #keys: readonly string[]
  readonly #urlFor: UrlFor
  readonly #now: () => number
  readonly #mode: PayloadMode
  readonly #hasDomain: (name: string) => boolean
  readonly #routedToDomain: (request: FwRequest) => boolean

  constructor(options: UrlSignerOptions) {
    checkOptions('new UrlSigner()', options, SIGNER_OPTIONS)
    if (options.keys.length === 0 || options.keys.some((k) => k.length === 0)) {
      throw new Error('UrlSigner needs at least one non-empty key')
    }
    this.#keys = options.keys
    this.#urlFor = options.urlFor
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.#mode = checkMode(options.payloadMode ?? 'relative')
    this.#hasDomain = options.hasDomain ?? (() => false)
    this.#routedToDomain = options.routedToDomain ?? (() => false)
  }

  /** A signed URL; with `ttl` (seconds) it expires. */
  signedUrlFor(
    name: string,
    params: UrlParams = {},
    query: UrlQuery = {},
    ttl: number | null = null,
    absolute = false,
    payloadMode: PayloadMode | null = null,
  ): string {
    const expires = ttl === null ? null : this.#now() + checkTtl(ttl)
    return this.#sign(name, params, query, expires, absolute, payloadMode)
  }

  /** A signed URL that expires `ttl` seconds from now (ttl required). */
  temporaryUrlFor(
    name: string,
    params: UrlParams = {},
    query: UrlQuery = {},
    ttl: number | null = null,
    absolute = false,
    payloadMode: PayloadMode | null = null,
  ): string {
    if (ttl === null) throw new RangeError('temporaryUrlFor needs a positive ttl in seconds')
    return this.signedUrlFor(name, params, query, ttl, absolute, payloadMode)
  }

  /** A signed URL valid until `expiresAt` (a Date or Unix seconds). */
  temporaryUrlUntil(
    name: string,
    expiresAt: Date | number,
    params: UrlParams = {},
    query: UrlQuery = {},
    absolute = false,
    payloadMode: PayloadMode | null = null,
  ): string {
    const expires = Math.floor(
      expiresAt instanceof Date ? expiresAt.getTime() / 1000 : Number(expiresAt),
    )
    // Checked at run time too: a JavaScript caller's misplaced argument would otherwise be
    // signed into `_exp` (`1795674737absolute`) and every request answered 400.
    if (!Number.isSafeInteger(expires) || typeof expiresAt === 'string')
      throw new TypeError('temporaryUrlUntil needs a valid Date or Unix seconds as its expiry')
    return this.#sign(name, params, query, expires, absolute, payloadMode)
  }

  /** Throws the HttpError DESIGN.md decides when `request`'s signature does not hold. */
  verify(request: FwRequest): void {
    const pairs = parsePairs(request.getQueryString())
    const sig = pairs.filter(([k]) => k === '_sig')
    if (sig.length !== 1)
      throw badRequest(sig.length === 0 ? 'Missing URL signature' : 'Repeated URL signature')
    const exp = pairs.filter(([k]) => k === '_exp')
    if (exp.length > 1 || (exp.length === 1 && !EXPIRY.test(exp[0]![1]))) {
      throw badRequest('Malformed URL expiry')
    }
    const canonical = canonicalQuery(pairs.filter(([k]) => k !== '_sig'))
    const path = canonicalPath(request.getPath())
    const payloads = [
      payloadOf(`//${hostOf(request.getHost())}${path}`, canonical),
      payloadOf(`${request.getSchemeAndHttpHost()}${path}`, canonical),
    ]
    // A path signed alone starts with one '/': read alone, `//acme.example.com/invoice/1` is the
    // payload of acme's link, which then verified on any host (a root catch-all takes that path).
    // Nor does a route with a domain take one: a link signed for a route without one
    // (`/invoice/7`) verified on every tenant's route of that path, which routing tries first.
    if (!path.startsWith('//') && !this.#routedToDomain(request))
      payloads.push(payloadOf(path, canonical))
    // A signature that is not 64 hex digits (either case) matches no key: 403 like any wrong one.
    const text = sig[0]![1]
    const given = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : null
    const valid =
      given !== null &&
      this.#keys.some((key) => payloads.some((p) => timingSafeEqual(hmac(key, p), given)))
    if (!valid) throw forbidden('Invalid URL signature')
    if (exp.length === 1 && Number(exp[0]![1]) < this.#now()) throw gone('This link has expired')
  }

  #sign(
    name: string,
    params: UrlParams,
    query: UrlQuery,
    expires: number | null,
    absolute: boolean,
    payloadMode: PayloadMode | null,
  ): string {
    const mode = payloadMode === null ? this.#mode : checkMode(payloadMode)
    // The verifier answers 400 to an `_exp` it cannot read: a URL signed with one never works.
    if (expires !== null && !EXPIRY.test(String(expires)))
      throw new RangeError(`A signed URL cannot expire at ${expires} (1970 to the year 33658)`)
    // urlFor writes the query (an object, a URLSearchParams or a Map alike); `_exp` goes last.
    // The HMAC covers the route's path, as the request will carry it: a base path of APP_URL
    // (`https://x.com/app/`, behind a proxy that strips /app) is only in the absolute output.
    const unsigned = this.#urlFor(name, params, query, false)
    if (parsePairs(queryOf(unsigned)).some(([key]) => RESERVED.test(key)))
      throw new TypeError('_sig and _exp are reserved for signed URLs')
    const relative = withExpiry(unsigned, expires)
    // A domain route's placeholders are in the host: signed as a path alone, a tenant's link
    // (acme.example.com/invoice/1) would verify on every other tenant's host too.
    const hostBound = mode === 'relative' && this.#hasDomain(name)
    const full =
      absolute || mode === 'absolute' || hostBound
        ? withExpiry(this.#urlFor(name, params, query, true), expires)
        : ''
    const queryAt = relative.indexOf('?')
    const path = queryAt === -1 ? relative : relative.slice(0, queryAt)
    const search = queryAt === -1 ? '' : relative.slice(queryAt)
    const origin =
      mode === 'absolute'
        ? new URL(full).origin
        : hostBound
          ? `//${hostOf(new URL(full).hostname)}`
          : ''
    const payload = payloadOf(
      `${origin}${canonicalPath(path)}`,
      canonicalQuery(parsePairs(search.slice(1))),
    )
    const signature = `${search ? '&' : '?'}_sig=${hmac(this.#keys[0]!, payload).toString('hex')}`
    return `${absolute ? full : relative}${signature}`
  }
}

// A query key the signature owns, alone or as the root of a bracketed one (`_sig[x]`).
const RESERVED = /^_(?:sig|exp)(?:\[|$)/

/** `url` with `_exp` appended to its query, when it expires. */
function withExpiry(url: string, expires: number | null): string {
  return expires === null ? url : `${url}${url.includes('?') ? '&' : '?'}_exp=${expires}`
}

/** The raw query of a URL urlFor made ('' when none). */
function queryOf(url: string): string {
  const at = url.indexOf('?')
  return at === -1 ? '' : url.slice(at + 1)
}

// A typo such as 'Absolute' would otherwise sign as 'relative' without a word.
function checkMode(mode: string): PayloadMode {
  if (mode !== 'relative' && mode !== 'absolute') {
    const got = JSON.stringify(mode)
    throw new RangeError(`payloadMode must be 'relative' or 'absolute', got ${got}`)
  }
  return mode
}

/** A host as the router compares it: lowercase, without the trailing dot of a full name. */
function hostOf(host: string): string {
  return (host.endsWith('.') ? host.slice(0, -1) : host).toLowerCase()
}

/** What the HMAC covers: no '?' when nothing but `_sig` was in the query. */
function payloadOf(prefix: string, canonical: string): string {
  return canonical === '' ? prefix : `${prefix}?${canonical}`
}

function hmac(key: string, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest()
}

/**
 * Decoded key/value pairs of a raw query string, decoded as the request's query() decodes them
 * ('+' is a space; a malformed escape stays as it is, the valid ones beside it are decoded): what
 * is signed is what the handler reads. Decoded otherwise, `v=%41%ZZ` verified as the signed
 * `v=%2541%25ZZ` (`%41%ZZ`) while the handler read `A%ZZ`.
 */
function parsePairs(query: string): [string, string][] {
  if (query === '') return []
  return query
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=')
      const raw = eq === -1 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]
      return raw.map((s) => decodeComponent(s!)) as [string, string]
    })
}

/**
 * The path as RFC 3986 §6.2.2 compares it: hex digits of escapes in upper case, and escapes of
 * letters, digits, `-`, `_` and `~` decoded (the router decodes them alike), so `%c3%bc` or `%7E`
 * from a client or proxy that rewrites escapes verifies as `%C3%BC` or `~`. One trailing slash is
 * dropped, as the router drops it (`/a/` is the route of `/a`; Laravel's `url()` trims it too).
 */
function canonicalPath(raw: string): string {
  const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw
  if (!path.includes('%')) return path
  return path.replace(/%[0-9A-Fa-f]{2}/g, (escape) => {
    const char = String.fromCharCode(parseInt(escape.slice(1), 16))
    return /[\w~-]/.test(char) ? char : escape.toUpperCase()
  })
}

/**
 * RFC 3986 encoding of each key and value, sorted by key. The sort is stable: a repeated key's
 * values keep their order, which is signed too (`k=1&k=2` and `k=2&k=1` read differently, since
 * `query('k')` takes the last).
 */
function canonicalQuery(pairs: [string, string][]): string {
  const encode = (s: string): string =>
    encodeURIComponent(s).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    )
  return pairs
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}

/** A ttl as seconds; JavaScript callers get a clear error for anything else. */
function checkTtl(ttl: unknown): number {
  if (typeof ttl !== 'number' || !Number.isFinite(ttl))
    throw new TypeError(`A signed URL's ttl must be a number of seconds, got ${typeof ttl}`)
  // A ttl under a second signs a link that is expired when handed out; null means no expiry.
  if (!(ttl >= 1)) throw new RangeError("A signed URL's ttl must be 1 second or more, or null")
  return Math.floor(ttl)
}
