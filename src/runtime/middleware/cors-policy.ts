/**
 * The kernel's `cors` option checked at boot (FW_SERVE_CONFIG naming the mistake) and turned into
 * what every request needs: the origin decision, the path scope, the fixed headers. The names are
 * those of @fastify/cors and the `cors` package (origin, methods, allowedHeaders, exposedHeaders,
 * credentials, maxAge), `paths` Laravel's.
 */
import { FwError } from '../../shared/errors.js'
import { checkOptions, optionNames } from '../../shared/option-names.js'
import { shownValue } from '../../shared/shown-value.js'
import type { HeaderMap } from '../http-error.js'
import { TOKEN } from '../request/headers.js'
import type { FwRequest } from '../request/request.js'

/**
 * Which origins may read responses: `'*'` (any; not with credentials), one origin or a list
 * (`'https://app.example.com'`, compared exactly, scheme and host case aside; `'null'` only when
 * listed), a RegExp tested on the Origin as sent, or a function of it and the request.
 */
export type CorsOrigin =
  string | readonly string[] | RegExp | ((origin: string, request: FwRequest) => boolean)

/**
 * The kernel's `cors` option.
 * @example
 * const cors: CorsOptions = { origin: ['https://app.example.com'], credentials: true, maxAge: 600 }
 */
export interface CorsOptions {
  origin: CorsOrigin
  /** Access-Control-Allow-Methods of preflights; default: the path's methods, as its 405 lists them. */
  methods?: readonly string[] | undefined
  /** Access-Control-Allow-Headers of preflights; default: the Access-Control-Request-Headers asked. */
  allowedHeaders?: readonly string[] | undefined
  /** Access-Control-Expose-Headers: response headers beyond the safelisted ones scripts may read. */
  exposedHeaders?: readonly string[] | undefined
  /** Access-Control-Allow-Credentials: true (cookies, Authorization); not with origin '*'. */
  credentials?: boolean | undefined
  /** Access-Control-Max-Age of preflights, in seconds; default: none (browsers keep 5 s). */
  maxAge?: number | undefined
  /** Paths CORS applies to: `'/api/*'` (/api and below) or exact paths; default: all. */
  paths?: readonly string[] | undefined
}

const CORS_OPTIONS = optionNames<CorsOptions>({
  origin: 1,
  methods: 1,
  allowedHeaders: 1,
  exposedHeaders: 1,
  credentials: 1,
  maxAge: 1,
  paths: 1,
})

/** The options as checked at boot, with what every request needs worked out once. */
export interface CorsPolicy {
  /** The Access-Control-Allow-Origin for `origin` ('' when none was sent), null when not allowed. */
  allow: (origin: string, request: FwRequest) => string | null
  /** Whether the answer depends on the Origin (all but '*'): then `Vary: Origin`, always. */
  vary: boolean
  inScope: (path: string) => boolean
  /** The fixed headers of actual responses and of preflights, beside Allow-Origin. */
  actual: HeaderMap
  preflight: HeaderMap
  methods: string | null
}

// scheme://host[:port] and nothing else: what an Origin header holds (RFC 6454 §6.1).
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\\\s]+$/i

/**
 * The policy of the kernel's `cors` option, checked (FW_SERVE_CONFIG naming the mistake); null
 * when it is not given.
 * @example
 * const policy = corsPolicy({ origin: 'https://app.example.com' })
 */
export function corsPolicy(options: unknown): CorsPolicy | null {
  if (options === undefined) return null
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw invalid(`cors must be an object, not ${shownValue(options)}`)
  checkOptions('Kernel.boot() cors', options, CORS_OPTIONS, (message) => invalid(message))
  const given = options as CorsOptions
  const credentials = given.credentials ?? false
  if (typeof credentials !== 'boolean')
    throw invalid(`cors.credentials must be true or false, not ${shownValue(credentials)}`)
  const { allow, vary } = allowOf(given.origin, credentials)
  const methods = headerList('methods', given.methods, credentials)
  const allowed = headerList('allowedHeaders', given.allowedHeaders, credentials)
  const exposed = headerList('exposedHeaders', given.exposedHeaders, credentials)
  const actual: HeaderMap = {}
  const preflight: HeaderMap = {}
  if (credentials) actual['access-control-allow-credentials'] = 'true'
  if (credentials) preflight['access-control-allow-credentials'] = 'true'
  if (exposed) actual['access-control-expose-headers'] = exposed
  if (allowed !== null) preflight['access-control-allow-headers'] = allowed
  const maxAge = given.maxAge
  if (maxAge !== undefined && !(Number.isInteger(maxAge) && maxAge >= 0 && maxAge <= 2 ** 31 - 1))
    throw invalid(
      `cors.maxAge must be a whole number of seconds, 0 or more, not ${shownValue(maxAge)}`,
    )
  if (maxAge !== undefined) preflight['access-control-max-age'] = String(maxAge)
  return { allow, vary, inScope: scopeOf(given.paths), actual, preflight, methods }
}

function allowOf(origin: unknown, credentials: boolean): Pick<CorsPolicy, 'allow' | 'vary'> {
  if (origin === '*') {
    if (credentials)
      throw invalid("cors.origin '*' cannot go with credentials: true", CREDENTIALS_HINT)
    return { allow: () => '*', vary: false }
  }
  if (typeof origin === 'function') {
    const decide = origin as (origin: string, request: FwRequest) => unknown
    return {
      allow: (sent, request) => (sent !== '' && decides(decide(sent, request)) ? sent : null),
      vary: true,
    }
  }
  if (origin instanceof RegExp) {
    // A g or y flag would make test() start where the last match ended: every other request refused.
    const pattern = new RegExp(origin.source, origin.flags.replace(/[gy]/g, ''))
    return { allow: (sent) => (sent !== '' && pattern.test(sent) ? sent : null), vary: true }
  }
  const list = typeof origin === 'string' ? [origin] : origin
  if (!Array.isArray(list) || list.length === 0)
    throw invalid(
      `cors.origin must be '*', an origin, a list of them, a RegExp or a function, not ${shownValue(origin)}`,
      "Write origin: 'https://app.example.com' (the origins that may call this app).",
    )
  const origins = new Set(list.map((entry: unknown) => serialized(entry)))
  // Exact: a Set lookup of the serialization, never a prefix or a pattern of what was sent.
  return {
    allow: (sent) => {
      const lower = sent.toLowerCase()
      return origins.has(lower) ? lower : null
    },
    vary: true,
  }
}

/** An origin function's answer: only `true` allows (a promise would be truthy). */
function decides(answer: unknown): boolean {
  if (typeof answer === 'boolean') return answer
  throw new TypeError(
    `The cors.origin function returned ${shownValue(answer)}: it must return true or false, synchronously`,
  )
}

/** The RFC 6454 serialization of an origin in the list (lowercase, no default port). */
function serialized(entry: unknown): string {
  if (entry === 'null') return 'null'
  if (typeof entry !== 'string')
    throw invalid(`cors.origin lists ${shownValue(entry)}, which is no origin string`)
  if (entry === '*')
    throw invalid("cors.origin lists '*': it stands alone", "Write origin: '*' for any origin.")
  const problem = entry.includes('*')
    ? 'a wildcard is no pattern here'
    : !/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)
      ? 'it has no scheme'
      : entry.endsWith('/')
        ? 'it ends with a slash, which an Origin never does'
        : !ORIGIN.test(entry)
          ? 'it has a path, query or user name, which an Origin never has'
          : null
  let url: URL | null = null
  try {
    if (problem === null) url = new URL(entry)
  } catch {
    // no URL: said below
  }
  if (url === null)
    throw invalid(
      `cors.origin ${JSON.stringify(entry)} is not an origin: ${problem ?? 'it is no URL'}`,
      entry.includes('*')
        ? 'Use a RegExp for patterns: origin: /^https:\\/\\/[a-z0-9-]+\\.example\\.com$/.'
        : "An origin is scheme://host[:port], as browsers send it: 'https://app.example.com'.",
    )
  return `${url.protocol}//${url.host}`.toLowerCase()
}

/** A list option as its header value ('' for an empty list), null when not given. */
function headerList(name: string, list: unknown, credentials: boolean): string | null {
  if (list === undefined) return null
  const example = name === 'methods' ? "['GET', 'POST']" : "['Content-Type', 'X-Request-Id']"
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== 'string' || !TOKEN.test(entry)))
    throw invalid(
      `cors.${name} must be a list of names such as ${example}, not ${shownValue(list)}`,
    )
  if (credentials && list.includes('*'))
    throw invalid(
      `cors.${name} lists '*', which browsers take literally with credentials: true`,
      `List the names: ${example}.`,
    )
  return list.join(', ')
}

/** Whether a path is one CORS applies to: `paths` entries are exact, or `/prefix/*`. */
function scopeOf(paths: unknown): (path: string) => boolean {
  if (paths === undefined) return () => true
  const valid = (path: unknown): boolean =>
    typeof path === 'string' &&
    path.startsWith('/') &&
    !path.slice(0, -2).includes('*') &&
    (!path.includes('*') || path.endsWith('/*'))
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every(valid))
    throw invalid(
      `cors.paths must be a list of paths, exact or ending in /*, not ${shownValue(paths)}`,
      "Write paths: ['/api/*', '/login'] (or leave it out for every path).",
    )
  const exact = new Set(paths.filter((path: string) => !path.endsWith('/*')).map(trimmed))
  const prefixes = paths.filter((path: string) => path.endsWith('/*')).map((p) => p.slice(0, -2))
  return (path) => {
    const own = trimmed(path)
    if (exact.has(own)) return true
    for (const prefix of prefixes)
      if (own.startsWith(prefix) && (own.length === prefix.length || own[prefix.length] === '/'))
        return true
    return false
  }
}

/** A path without its trailing slash, as the router matches it. */
function trimmed(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
}

const CREDENTIALS_HINT =
  "Browsers refuse a credentialed answer of '*'; list the origins that may send cookies (origin: ['https://app.example.com']), or drop credentials."

function invalid(message: string, hint?: string): FwError {
  return new FwError('FW_SERVE_CONFIG', message, {
    hint: hint ?? 'Fix the cors option of the kernel (see the README, "CORS").',
  })
}
