/**
 * Set-Cookie fields for `withCookie` and `withoutCookie`: serialised by the `cookie` package
 * (Express's and Fastify's), with Laravel's defaults, and the rules browsers hold a cookie to
 * checked first, so that a cookie a browser would drop is a TypeError (a 500) rather than lost
 * without a word.
 */
import { serialize } from 'cookie'
import { checkOptions, optionNames } from '../shared/option-names.js'
// RFC 9110 token characters: what a cookie name may hold.
import { TOKEN } from './request/headers.js'

/**
 * The attributes of a cookie. Defaults: `path: '/'`, `httpOnly: true`, `sameSite: 'lax'`,
 * `secure: false` (give `secure: req.isSecure()`, or `true` behind HTTPS).
 * @example
 * const remember: CookieOptions = { maxAge: 60 * 60 * 24 * 30, secure: true }
 */
export interface CookieOptions {
  /** Seconds until the cookie expires (Max-Age, floored); 0 or less expires it now. */
  maxAge?: number | undefined
  /** When the cookie expires (Expires); Max-Age wins where both are given. */
  expires?: Date | undefined
  path?: string | undefined
  domain?: string | undefined
  secure?: boolean | undefined
  httpOnly?: boolean | undefined
  /** 'none' needs `secure: true`: browsers drop such a cookie otherwise. */
  sameSite?: 'lax' | 'strict' | 'none' | undefined
  /** CHIPS: a cookie kept per top-level site; needs `secure: true`. */
  partitioned?: boolean | undefined
  priority?: 'low' | 'medium' | 'high' | undefined
}

/**
 * What `withoutCookie` takes: the attributes that name the cookie to expire (its path and
 * domain) and those its prefix requires.
 * @example
 * const where: ExpiredCookieOptions = { path: '/admin' }
 */
export type ExpiredCookieOptions = Omit<CookieOptions, 'maxAge' | 'expires'>

const OPTIONS = optionNames<CookieOptions>({
  maxAge: 1,
  expires: 1,
  path: 1,
  domain: 1,
  secure: 1,
  httpOnly: 1,
  sameSite: 1,
  partitioned: 1,
  priority: 1,
})
const EXPIRED_OPTIONS = OPTIONS.filter((name) => name !== 'maxAge' && name !== 'expires')
const FLAGS = ['secure', 'httpOnly', 'partitioned'] as const
const SAME_SITE = ['lax', 'strict', 'none']
const PRIORITY = ['low', 'medium', 'high']
const CONTROL_OR_SEMICOLON = /[\x00-\x1f\x7f;]/
// RFC 6265bis §5.7: a browser ignores a cookie whose name and value are longer together.
const MAX_PAIR = 4096
const EPOCH = new Date(0)

/**
 * The Set-Cookie field of cookie `name` = `value` (percent-encoded).
 * @example
 * setCookieField('theme', 'dark', { maxAge: 3600 })
 * // 'theme=dark; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax'
 */
export function setCookieField(name: string, value: string, options: CookieOptions = {}): string {
  const where = `withCookie(${JSON.stringify(String(name))})`
  checkOptions(where, options, OPTIONS)
  if (typeof value !== 'string')
    throw new TypeError(`${where}: the value must be a string, not ${typeof value}`)
  return cookieField(where, name, value, options)
}

/**
 * The Set-Cookie field that expires cookie `name`: empty, Max-Age=0 and an Expires in 1970.
 * @example
 * expiredCookieField('sid', { path: '/admin' })
 */
export function expiredCookieField(name: string, options: ExpiredCookieOptions = {}): string {
  const where = `withoutCookie(${JSON.stringify(String(name))})`
  checkOptions(where, options, EXPIRED_OPTIONS)
  return cookieField(where, name, '', { ...options, maxAge: 0, expires: EPOCH })
}

function cookieField(where: string, name: string, value: string, options: CookieOptions): string {
  if (typeof name !== 'string' || !TOKEN.test(name))
    throw new TypeError(`${where}: a cookie name is letters, digits and !#$%&'*+-.^_\`|~ only`)
  const resolved: CookieOptions = {
    ...options,
    path: options.path ?? '/',
    httpOnly: options.httpOnly ?? true,
    sameSite: options.sameSite ?? 'lax',
  }
  checkAttributes(where, resolved)
  checkPrefix(where, name, resolved)
  const field = serializeOrExplain(where, name, value, resolved)
  const pair = field.indexOf(';')
  if ((pair === -1 ? field.length : pair) - 1 > MAX_PAIR)
    throw new TypeError(
      `${where}: name and encoded value exceed the ${MAX_PAIR} bytes browsers keep`,
    )
  return field
}

function checkAttributes(where: string, options: CookieOptions): void {
  for (const flag of FLAGS)
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean')
      throw new TypeError(`${where}: ${flag} must be true or false`)
  const { maxAge, expires, path, domain, sameSite, priority } = options
  if (maxAge !== undefined && !(typeof maxAge === 'number' && Number.isFinite(maxAge)))
    throw new TypeError(`${where}: maxAge must be a finite number of seconds`)
  if (expires !== undefined && !(expires instanceof Date && !Number.isNaN(expires.getTime())))
    throw new TypeError(`${where}: expires must be a valid Date`)
  for (const [key, text] of [
    ['path', path],
    ['domain', domain],
  ] as const)
    if (text !== undefined && (typeof text !== 'string' || CONTROL_OR_SEMICOLON.test(text)))
      throw new TypeError(`${where}: ${key} must be a string without control characters or ';'`)
  if (!SAME_SITE.includes(sameSite!))
    throw new TypeError(`${where}: sameSite must be 'lax', 'strict' or 'none'`)
  if (priority !== undefined && !PRIORITY.includes(priority))
    throw new TypeError(`${where}: priority must be 'low', 'medium' or 'high'`)
  if (options.secure !== true && (sameSite === 'none' || options.partitioned === true))
    throw new TypeError(
      `${where}: ${sameSite === 'none' ? "sameSite 'none'" : 'partitioned'} needs secure: true (browsers drop the cookie otherwise)`,
    )
}

/**
 * RFC 6265bis §4.1.3: browsers keep a `__Secure-` cookie only when Secure, and a `__Host-` one
 * only when Secure, with Path=/ and no Domain. The prefixes are matched case aside, as the RFC
 * now has browsers do (`__HOST-` too).
 */
function checkPrefix(where: string, name: string, options: CookieOptions): void {
  const lower = name.toLowerCase()
  const host = lower.startsWith('__host-')
  if (!host && !lower.startsWith('__secure-')) return
  if (options.secure !== true)
    throw new TypeError(
      `${where}: a ${name.slice(0, name.indexOf('-') + 1)} cookie needs secure: true`,
    )
  if (host && (options.path !== '/' || (options.domain ?? '') !== ''))
    throw new TypeError(`${where}: a __Host- cookie needs path '/' and no domain`)
}

/** `serialize`'s field, its errors (a domain that is no host name) said with `where`. */
function serializeOrExplain(
  where: string,
  name: string,
  value: string,
  options: CookieOptions,
): string {
  try {
    return serialize(name, value, options)
  } catch (error) {
    // encodeURIComponent throws URIError on half a surrogate pair.
    if (error instanceof URIError)
      throw new TypeError(`${where}: the value is not well-formed Unicode`)
    throw new TypeError(`${where}: ${(error as Error).message}`)
  }
}

/**
 * `fields` (the Set-Cookie of a response: none, one or a list) with `field` last, and without
 * any earlier field of the same cookie (name, domain and path): a browser would keep the last
 * anyway, and two fields of one cookie say two things.
 * @example
 * withCookieField(['a=1; Path=/', 'b=2; Path=/'], 'a=3; Path=/') // ['b=2; Path=/', 'a=3; Path=/']
 */
export function withCookieField(fields: string | string[] | undefined, field: string): string[] {
  const list = fields === undefined ? [] : typeof fields === 'string' ? [fields] : fields
  const key = cookieKey(field)
  const kept = list.filter((other) => cookieKey(other) !== key)
  kept.push(field)
  return kept
}

/** Name, domain and path of a Set-Cookie field: the cookie a browser stores it as. */
function cookieKey(field: string): string {
  const parts = field.split(';')
  const eq = parts[0]!.indexOf('=')
  let domain = ''
  let path = ''
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!
    const sign = part.indexOf('=')
    if (sign === -1) continue
    const attribute = part.slice(0, sign).trim().toLowerCase()
    // A browser keeps the last of each, the domain without a leading dot and case aside.
    if (attribute === 'domain')
      domain = part
        .slice(sign + 1)
        .trim()
        .replace(/^\./, '')
        .toLowerCase()
    else if (attribute === 'path') path = part.slice(sign + 1).trim()
  }
  return `${eq === -1 ? '' : parts[0]!.slice(0, eq).trim()}\n${domain}\n${path}`
}
