// Helpers shared by the generated matcher and URL generator of one cache generation.
// Copied verbatim from fw's templates/cache/helpers.mjs by `fw route:cache build` - do not edit.
// ASCII only: one character outside Latin-1 makes V8 keep this whole source at two bytes each.
// This is the hot path: every request calls into these. Change with care and run `npm run bench`.

/**
 * Thrown by the matcher when a matched parameter holds a malformed %-escape; match() answers 400.
 * Recognised by its marker, not its identity: shards may load a second copy of this module.
 */
export const MALFORMED = Object.assign(new Error('Malformed percent-encoding in the request path'), { fwMalformed: true })

/**
 * Thrown by dec() when a matched parameter holds an escape that normalizePath() rewrites: the
 * path was matched as sent, so match() matches its normalized form instead. Marker as above.
 */
export const DENORMALIZED = Object.assign(new Error('The request path is not in normal form'), { fwDenormalized: true })

/** The shared, frozen params object of routes without parameters. */
export const EMPTY = Object.freeze(Object.create(null))

/** path.slice(a, b), percent-decoded only when it holds a '%'. */
export function dec(path, a, b) {
  const s = path.slice(a, b)
  if (s.indexOf('%') === -1) return s
  if (normalizePath(s) !== s) throw DENORMALIZED
  try {
    return decodeURIComponent(s)
  } catch {
    throw MALFORMED
  }
}

// 0-15 for a hex digit's char code, else -1.
function hexValue(c) {
  if (c >= 48 && c <= 57) return c - 48
  const lower = c | 32
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

// ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 unreserved).
function unreserved(c) {
  const lower = c | 32
  return (lower >= 97 && lower <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126
}

const HEX = '0123456789ABCDEF'

/**
 * The path in RFC 3986 normal form (section 6.2.2): escapes of unreserved characters decoded
 * (`%41` to `A`, `%34%32` to `42`), other escapes with uppercase hex (`%c3%a9` to `%C3%A9`).
 * Route literals are stored in this form, so equivalent URLs match the same route. Escapes of
 * reserved characters (`%2F`) and malformed ones stay as they are; nothing is decoded twice, and
 * no escape is invented: a hex digit right after a dangling '%' stays encoded (decoding `%33`
 * after a malformed `%C` would give `%C3`, which the client never sent), so a malformed path
 * stays malformed. match() calls it only for a path it could not settle as sent.
 */
export function normalizePath(path) {
  let out = ''
  let copied = 0
  // The last two char codes of `out`: reading them from `out` itself, a string built by `+=`,
  // flattened it at every escape (40,000 escapes took 170 ms; now linear).
  let last = NaN
  let beforeLast = NaN
  for (let i = path.indexOf('%'); i !== -1; i = path.indexOf('%', i + 1)) {
    const high = hexValue(path.charCodeAt(i + 1))
    const low = high === -1 ? -1 : hexValue(path.charCodeAt(i + 2))
    if (low === -1) continue
    const code = high * 16 + low
    const decode =
      unreserved(code) && !(hexValue(code) !== -1 && dangling(path, i, copied, last, beforeLast))
    const normal = decode ? String.fromCharCode(code) : `%${HEX[high]}${HEX[low]}`
    if (path.startsWith(normal, i)) continue
    out += path.slice(copied, i) + normal
    beforeLast = normal.length === 3 ? normal.charCodeAt(1) : i > copied ? path.charCodeAt(i - 1) : last
    last = normal.charCodeAt(normal.length - 1)
    copied = i + 3
    i += 2
  }
  return copied === 0 ? path : out + path.slice(copied)
}

// Whether the output normalizePath() has built up to path[i] (`out`, ending in `beforeLast`,
// `last`, then path[copied, i)) ends in a '%' that one or two more hex digits would make an escape.
function dangling(path, i, copied, last, beforeLast) {
  const at1 = i - 1 >= copied ? path.charCodeAt(i - 1) : last
  const at2 = i - 2 >= copied ? path.charCodeAt(i - 2) : i - 1 >= copied ? last : beforeLast
  return at1 === 37 || (at2 === 37 && hexValue(at1) !== -1)
}

/** The integer value of path[a, b) when it is 1-15 ASCII digits, else -1. */
export function int(path, a, b) {
  if (b - a > 15) return -1
  let v = 0
  for (let i = a; i < b; i++) {
    const c = path.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

/** Whether path[a, b) is all hex digits. */
export function hex(path, a, b) {
  for (let i = a; i < b; i++) {
    const c = path.charCodeAt(i)
    const lower = c | 32 // folds A-F onto a-f (and nothing else onto them)
    if (!((c >= 48 && c <= 57) || (lower >= 97 && lower <= 102))) return false
  }
  return true
}

/** Whether path[a, b) is a UUID: 8-4-4-4-12 hex digits, any case. */
export function uuid(path, a, b) {
  if (b - a !== 36) return false
  for (let i = 0; i < 36; i++) {
    const c = path.charCodeAt(a + i)
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false
    } else {
      const lower = c | 32
      if (!((c >= 48 && c <= 57) || (lower >= 97 && lower <= 102))) return false
    }
  }
  return true
}

/** Whether path[a, b) is a slug: lowercase letters and digits joined by single dashes. */
export function slug(path, a, b) {
  let dash = true // at the start, or just after a dash: a letter or digit must come next
  for (let i = a; i < b; i++) {
    const c = path.charCodeAt(i)
    if (c === 45) {
      if (dash) return false
      dash = true
    } else if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      dash = false
    } else {
      return false
    }
  }
  return !dash
}

/** Whether the sticky regex `re` matches exactly path[a, b), tested in place (no slice). */
export function sticky(re, path, a, b) {
  re.lastIndex = a
  return re.test(path) && re.lastIndex === b
}

/** Lowercases a Host header and drops its port and trailing dot. */
export function normalizeHost(host) {
  let h = host
  if (h.charCodeAt(0) !== 91) {
    const colon = h.lastIndexOf(':')
    if (colon !== -1) h = h.slice(0, colon)
  } else {
    const close = h.indexOf(']')
    if (close !== -1) h = h.slice(0, close + 1)
  }
  if (h.endsWith('.')) h = h.slice(0, -1)
  return h.toLowerCase()
}

/** The error urlFor throws for an unknown name or a missing, unknown or invalid parameter. */
export class UrlGenerationError extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'UrlGenerationError'
    this.code = code
  }
}

/**
 * What loading a file of this generation throws when it is missing or damaged (deleted or edited
 * after the build): the cache no longer is what the manifest describes, so it says how to rebuild.
 */
export function cacheDamaged(file, cause) {
  const why = cause?.code ?? cause?.message ?? String(cause)
  const error = new Error(`The route cache is damaged: ${file} cannot be loaded (${why}); run \`fw route:cache build\` to rebuild it`, { cause })
  error.code = 'FW_CACHE_STALE'
  return error
}

// The base of absolute URLs as given (parsed when used, so a malformed APP_URL fails urlFor(),
// not the import of the router).
let baseUrl = globalThis.process?.env?.APP_URL || 'http://localhost'

/**
 * Sets the base that absolute URLs start with (default: $APP_URL or http://localhost):
 * scheme://host[:port] and a path, which is kept (`https://x.com/app/` gives `https://x.com/app/users/1`).
 */
export function setBaseUrl(url) {
  baseUrl = new URL(url).href
}

const compiled = new Map()
function constraint(source) {
  let re = compiled.get(source)
  if (re === undefined) compiled.set(source, (re = new RegExp(`^(?:${source})$`)))
  return re
}

/**
 * Fills a pre-parsed pattern. `parts` alternates literal text and parameter descriptors
 * `[name, type, regexSource | null, optional]`; `sep` is '/' for paths and '.' for hosts.
 */
function fill(routeName, parts, params, used, sep, form) {
  let out = ''
  let skipping = false
  for (const part of parts) {
    if (typeof part === 'string') {
      if (!skipping) out += part
      continue
    }
    const [name, type, source, optional] = part
    used.add(name)
    const value = Object.hasOwn(params, name) ? params[name] : undefined
    if (value === undefined || value === null) {
      if (!optional) throw missing(routeName, name)
      skipping = true
      continue
    }
    if (skipping) throw new UrlGenerationError('FW_URL_PARAM', `urlFor("${routeName}"): "${name}" is given but an optional parameter before it is not`)
    out += encodeValue(routeName, name, type, source, value, sep, form)
  }
  if (skipping && out.length > 1 && out.endsWith('/')) out = out.slice(0, -1)
  return out
}

/**
 * The text a value puts in the URL. A constraint is tested on the encoded text, in the normal form
 * match() tests it in, so that urlFor's URL matches its route and a value it refuses could not
 * have matched (`{q:[a-z]+%20[a-z]+}` takes 'a b'; `{q:[a-z ]+}` matches no request at all).
 * A path may hold the sub-delimiters, ':' and '@' as they are or escaped, two URLs match() tells
 * apart: a value the constraint refuses in the usual encoding is tried in the other spellings
 * (`{ids:[0-9]+(,[0-9]+)*}` takes '1,2' as `1,2`, `{e:[^/]+@[^/]+}` 'a@b.c' as `a@b.c`).
 * `form` is the spelling of a constraint tested in place on the whole path (source null here).
 */
function encodeValue(routeName, name, type, source, value, sep, form = 0) {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') {
    throw invalid(routeName, name, `must be a string or a number, got ${typeof value}`)
  }
  const text = String(value)
  if (type === 'catchall') {
    if (text === '' && source === '.+') throw invalid(routeName, name, 'must not be empty')
    return encodeRest(routeName, name, text)
  }
  if (text === '') throw invalid(routeName, name, 'must not be empty')
  if (sep === '.') return encodeHostLabel(routeName, name, type, source, text)
  if (source === null) return dotSegment(spell(encodeText(routeName, name, text), type === 'regex' ? form : 0))
  const encoded = encodeText(routeName, name, text)
  const re = constraint(source)
  if (re.test(encoded)) return dotSegment(encoded)
  for (let other = 1; other < SPELLINGS; other++) {
    const spelled = spell(encoded, other)
    if (spelled !== encoded && re.test(spelled)) return dotSegment(spelled)
  }
  const shown = encoded === text ? `"${text}"` : `"${text}" (in a URL "${encoded}")`
  throw mismatch(routeName, name, type, source, shown)
}

/** How many spellings spell() knows: 0 encodeURIComponent's, 1 and 2 below. */
export const SPELLINGS = 3

/**
 * encodeURIComponent's text in another spelling a path segment may use: 1 keeps the
 * sub-delimiters, ':' and '@' as they are (RFC 3986 pchar: `$&+,;=:@`), 2 also escapes the ones
 * encodeURIComponent keeps (`!'()*`). match() keeps each as sent, so a constraint sees the one used.
 */
function spell(encoded, form) {
  if (form === 1) return encoded.replace(/%(?:2[46BC]|3[ABD]|40)/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)))
  if (form === 2) return encoded.replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
  return encoded
}

// A host parameter fills one DNS label: anything else would build a host the route cannot match.
// match() lowercases the Host header, so the constraint sees the label lowercased too.
function encodeHostLabel(routeName, name, type, source, text) {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw invalid(routeName, name, `"${text}" is not a single host label`)
  const label = text.toLowerCase()
  if (source !== null && !constraint(source).test(label)) throw mismatch(routeName, name, type, source, `"${text}"`)
  return label
}

/**
 * A catch-all value: each '/'-separated piece encoded, the slashes kept. A slash at either end is
 * encoded (%2F, which the catch-all decodes back): a leading one would make an empty segment, so
 * at the root `//evil.com` (a URL to another site), and match() drops a trailing one. So is a
 * slash beside a '.' or '..' piece: `a/../b` as `a%2F..%2Fb` holds no dot-segment, which browsers
 * and fetch remove even escaped (`a/%2E%2E/b` reached the server as `/b`). Only a whole value
 * '.' or '..' is left one, escaped: HTTP clients send `%2E%2E` as it is, browsers do not.
 */
function encodeRest(routeName, name, text) {
  const pieces = text.split('/').map((piece) => encodeText(routeName, name, piece))
  let out = pieces[0]
  for (let i = 1; i < pieces.length; i++) {
    out += (isDotSegment(pieces[i - 1]) || isDotSegment(pieces[i]) ? '%2F' : '/') + pieces[i]
  }
  out = dotSegment(out)
  if (out.startsWith('/')) out = '%2F' + out.slice(1)
  if (out.endsWith('/')) out = out.slice(0, -1) + '%2F'
  return out
}

// A segment '.' or '..' would be removed by clients as a dot-segment (RFC 3986 5.2.4): escaped,
// it reaches the server, which decodes it back to the value (match() tests its normal form '..').
function dotSegment(segment) {
  return segment === '.' ? '%2E' : segment === '..' ? '%2E%2E' : segment
}

function isDotSegment(segment) {
  return segment === '.' || segment === '..'
}

/** encodeURIComponent, failing like any other invalid value (a lone surrogate is a URIError). */
function encodeText(routeName, name, text) {
  try {
    return encodeURIComponent(text)
  } catch {
    throw invalid(routeName, name, 'is not well-formed Unicode (it holds a lone surrogate)')
  }
}

function mismatch(routeName, name, type, source, shown) {
  return invalid(routeName, name, `${shown} does not match ${type === 'regex' ? source : type}`)
}

function missing(routeName, name) {
  return new UrlGenerationError('FW_URL_PARAM', `urlFor("${routeName}"): missing required parameter "${name}"`)
}

function invalid(routeName, name, problem) {
  return new UrlGenerationError('FW_URL_PARAM', `urlFor("${routeName}"): parameter "${name}" ${problem}`)
}

/**
 * Builds `?a=1&b%5B0%5D=2&c%5Bd%5D=3` from an object: arrays and plain objects as PHP-style
 * bracketed keys, since fw's query parser keeps only the last value of a repeated plain key.
 * null and undefined values are left out; other values are written as strings.
 */
export function queryString(query) {
  let out = ''
  for (const key of Object.keys(query)) out = appendPairs(out, encodeQuery(key), query[key])
  return out
}

// `prefix` is the key already encoded; brackets go in as %5B/%5D, which the parser decodes
// before it splits the key. Lists are renumbered past left-out items (unlike PHP), so they read
// back as lists rather than as objects with gaps.
function appendPairs(out, prefix, value) {
  if (value === undefined || value === null) return out
  if (Array.isArray(value)) {
    let index = 0
    for (const item of value) {
      const next = appendPairs(out, `${prefix}%5B${index}%5D`, item)
      if (next !== out) index++
      out = next
    }
    return out
  }
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      out = appendPairs(out, `${prefix}%5B${encodeQuery(key)}%5D`, value[key])
    }
    return out
  }
  if (isCollection(value)) {
    throw new UrlGenerationError('FW_URL_PARAM', `urlFor: the query value ${JSON.stringify(decodeURIComponent(prefix))} is ${kindOf(value)}, which would be written as "${String(value)}"; give a list (an array) or an object`)
  }
  return out + (out === '' ? '?' : '&') + prefix + '=' + encodeQuery(String(value))
}

// A Set, Map, iterator or async iterable in the query: String() would write "[object Set]".
function isCollection(value) {
  return typeof value === 'object' && (value instanceof Set || value instanceof Map || typeof value.next === 'function' || typeof value[Symbol.asyncIterator] === 'function')
}

function encodeQuery(text) {
  try {
    return encodeURIComponent(text)
  } catch {
    throw new UrlGenerationError('FW_URL_PARAM', `urlFor: the query holds text that is not well-formed Unicode (a lone surrogate): ${JSON.stringify(text)}`)
  }
}

// Dates, URLs and class instances are values (written with String()), not containers.
function isPlainObject(value) {
  if (typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype
}

/** The base of an absolute URL; one that is no absolute URL ("example.com") is a UrlGenerationError. */
function parseBase(name, base, given) {
  try {
    return new URL(base)
  } catch {
    const origin = given ? 'The base URL' : 'APP_URL' // setBaseUrl() checks its own
    throw new UrlGenerationError('FW_URL_BASE', `urlFor("${name}"): ${origin} "${base}" is not an absolute URL; write it as https://example.com`)
  }
}

// A string or a list would be read by index ('a=1' as the query ?0=a&1=%3D&2=1).
function checkObject(name, what, value) {
  // A Headers, FormData, Set, iterator or stream has no own keys either: silently nothing.
  if (typeof value !== 'object' || Array.isArray(value) || typeof value[Symbol.iterator] === 'function' || typeof value[Symbol.asyncIterator] === 'function') {
    throw new UrlGenerationError('FW_URL_PARAM', `urlFor("${name}"): ${what} must be an object of names to values, got ${kindOf(value)}`)
  }
}

function kindOf(value) {
  if (Array.isArray(value)) return 'an array'
  if (typeof value !== 'object') return typeof value
  // Named alike on every Node: an iterator's constructor is Iterator only from Node 22 on.
  if (typeof value.next === 'function') return 'an iterator'
  const type = value.constructor?.name
  if (typeof type !== 'string' || type === '' || type === 'Object') return 'an iterable'
  return `${/^[AEIO]/.test(type) ? 'an' : 'a'} ${type}` // a Uint8Array, an Int8Array
}

// A URLSearchParams or a Map has no own keys: written as an object, it was silently no query.
// Its entries are the query; a key given twice, or as `c[]`, becomes a list (read back as one,
// where a repeated plain key keeps only its last value).
function queryObject(name, query) {
  if (query instanceof Map) return mapQuery(name, query)
  if (!(query instanceof URLSearchParams)) {
    checkObject(name, 'the query (third argument)', query)
    return query
  }
  const out = Object.create(null) // a key "__proto__" stays a key
  for (const key of query.keys()) {
    // `c[]` is the parser's own list syntax: its values are the list c (written c[0], c[1]).
    const base = key.length > 2 && key.endsWith('[]') ? key.slice(0, -2) : key
    const name = base !== key && query.has(base) ? key : base
    if (Object.hasOwn(out, name)) continue
    const values = query.getAll(key)
    out[name] = name !== key || values.length > 1 ? values : values[0]
  }
  return out
}

// A Map's keys are names: a string, or a number written as one. Two keys that write the same
// name (1 and '1') would have kept the last one's value without a word.
function mapQuery(name, map) {
  const out = Object.create(null)
  for (const [key, value] of map) {
    if (typeof key !== 'string' && typeof key !== 'number') {
      throw new UrlGenerationError('FW_URL_PARAM', `urlFor("${name}"): a query Map's keys must be strings or numbers, got ${typeof key}`)
    }
    const text = String(key)
    if (Object.hasOwn(out, text)) {
      throw new UrlGenerationError('FW_URL_PARAM', `urlFor("${name}"): the query Map has two keys written "${text}" (a number and a string)`)
    }
    out[text] = value
  }
  return out
}

/**
 * urlFor over the table of names: `names[name] = [hostParts | null, pathParts]`; `form`, the
 * spelling (see spell()) of the values of constraints tested in place, after the build.
 */
export function buildUrl(names, name, params, query, absolute, form = 0) {
  const entry = Object.hasOwn(names, name) ? names[name] : undefined
  if (entry === undefined) {
    throw new UrlGenerationError('FW_URL_UNKNOWN_ROUTE', `urlFor: there is no route named "${name}"`)
  }
  // Falsy stands for none (`cond && { page }`), as it always has.
  const given = params || {}
  checkObject(name, 'the parameters (second argument)', given)
  if (query) query = queryObject(name, query)
  const used = new Set()
  const [hostParts, pathParts] = entry
  const host = hostParts === null ? null : fill(name, hostParts, given, used, '.', 0)
  const path = fill(name, pathParts, given, used, '/', form)
  for (const key of Object.keys(given)) {
    if (!used.has(key)) {
      throw new UrlGenerationError('FW_URL_PARAM', `urlFor("${name}"): unknown parameter "${key}"; pass query values as the third argument`)
    }
  }
  const url = path + (query ? queryString(query) : '')
  if (absolute === false || absolute === undefined) return url
  // A base given to this call contributes scheme, host and port; the default base (APP_URL or
  // setBaseUrl()) its path too, for an app served under a path (`https://x.com/app`).
  const base = parseBase(name, typeof absolute === 'string' ? absolute : baseUrl, typeof absolute === 'string')
  const prefix = typeof absolute === 'string' ? '' : base.pathname.replace(/\/+$/, '')
  const authority = host === null ? base.host : host + (base.port ? `:${base.port}` : '')
  return `${base.protocol}//${authority}${prefix}${url}`
}
