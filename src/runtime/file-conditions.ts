/**
 * What a GET or HEAD of a file should get, given its validators: the whole file, one byte range
 * (RFC 9110 §14), "not modified" or "precondition failed" (§13); and "not modified" for any 200
 * that carries validators (`notModifiedFor`, send-response.ts). The checks are those of Express's
 * `send` (`fresh`'s, here with HTTP dates read strictly; `range-parser`, loaded on first use), so
 * fw answers caches and download managers the way they expect.
 */
import type { FwRequest } from './request/request.js'
import { isName } from './request/headers.js'
import { FwResponse } from './response.js'

export type FilePlan =
  | { status: 200 }
  | { status: 206; start: number; end: number }
  | { status: 304 }
  | { status: 412 }
  | { status: 416 }

export interface FileValidators {
  etag: string
  /** Last-Modified as sent (HTTP date, whole seconds). */
  lastModified: string
  size: number
}

const WHOLE: FilePlan = { status: 200 }

const loadRangeParser = async () => (await import('range-parser')).default
let rangeModule: ReturnType<typeof loadRangeParser> | undefined

/**
 * The answer `request` gets for a file with `validators`.
 * @example
 * const plan = await planFile(request, { etag, lastModified, size })
 * if (plan.status === 206) stream(plan.start, plan.end)
 */
export async function planFile(request: FwRequest, validators: FileValidators): Promise<FilePlan> {
  const method = request.getMethod()
  if (method !== 'GET' && method !== 'HEAD') return WHOLE
  if (preconditionFails(request, validators)) return { status: 412 }
  if (isFresh(request, validators.etag, validators.lastModified)) return { status: 304 }
  return planRange(request, validators)
}

// Cache-Control: no-cache in a request asks for the resource itself, not a 304 (an end-to-end
// reload, RFC 9111 §5.2.1.4); directives are case-insensitive.
const NO_CACHE = /(?:^|,)[ \t]*no-cache[ \t]*(?:,|$)/i

/**
 * Whether the copy `request` says its client has is still the current one (the `fresh` package's
 * rules): If-None-Match, when sent, decides alone: `*`, or a tag that matches `etag` by weak
 * comparison (RFC 9110 §13.1.2, §8.8.3.2); else If-Modified-Since, a valid HTTP date not later
 * than now (§13.1.3), at or after `lastModified`. Never with Cache-Control: no-cache.
 * @example
 * isFresh(request, 'W/"2a-17f"', 'Tue, 01 Apr 2025 10:00:00 GMT') // true for If-None-Match: "2a-17f"
 */
export function isFresh(
  request: FwRequest,
  etag: string | undefined,
  lastModified: string | undefined,
): boolean {
  const noneMatch = request.getHeaderLine('if-none-match')
  const modifiedSince = noneMatch === '' ? request.getHeaderLine('if-modified-since') : ''
  if (noneMatch === '' && modifiedSince === '') return false
  if (NO_CACHE.test(request.getHeaderLine('cache-control'))) return false
  if (noneMatch !== '')
    return noneMatch.trim() === '*' || (etag !== undefined && listsTag(noneMatch, etag))
  // A date later than now is invalid (RFC 9110 §13.1.3) and ignored: taken, it kept every later
  // version a 304.
  const since = httpDate(modifiedSince)
  if (Number.isNaN(since) || since > Date.now()) return false
  const modified = httpDate(lastModified ?? '')
  return !Number.isNaN(modified) && modified <= since
}

/**
 * Whether a raw header list (Node's `req.rawHeaders`) carries If-None-Match or If-Modified-Since:
 * only such a request can be answered 304. Hot path (every response of status 200): one pass,
 * comparing lengths before names.
 */
export function asksIfFresh(raw: readonly string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (isName(name, 'if-none-match') || isName(name, 'if-modified-since')) return true
  }
  return false
}

// Representation metadata, which a 304 does not send (RFC 9110 §15.4.5): a cache would put it on
// the copy it stored (RFC 9111 §4.3.4), the body it describes being that copy's.
const REPRESENTATION = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-disposition',
  'content-range',
  'transfer-encoding',
])

/**
 * The 304 Not Modified that stands for `response`, a 200 to a GET or HEAD, when the copy
 * `request` says its client has is fresh (`isFresh`) by the ETag or Last-Modified the response
 * carries; else null. The 304 keeps the response's other headers (ETag, Cache-Control, Expires,
 * Vary, Content-Location, Last-Modified, Set-Cookie, the request id), not those of its body,
 * and has none (the caller closes a streamed one).
 * @example
 * const answer = notModifiedFor(json(data, 200, { etag: '"v7"' }), request) ?? response
 */
export function notModifiedFor(response: FwResponse, request: FwRequest): FwResponse | null {
  const method = request.getOriginalMethod()
  if (method !== 'GET' && method !== 'HEAD') return null
  const etag = response.header('etag')
  const lastModified = response.header('last-modified')
  if (etag === undefined && lastModified === undefined) return null
  if (!isFresh(request, etag, lastModified)) return null
  const headers = response.headers
  const kept: Record<string, string | string[]> = {}
  for (const name in headers) if (!REPRESENTATION.has(name)) kept[name] = headers[name]!
  return new FwResponse(304, kept, null)
}

async function planRange(request: FwRequest, validators: FileValidators): Promise<FilePlan> {
  const header = request.getHeaderLine('range')
  if (header === '' || !ifRangeHolds(request.getHeaderLine('if-range'), validators)) return WHOLE
  // An empty file has no byte to point at, yet a suffix (`-500`, "the last 500") is satisfiable
  // (RFC 9110 §14.1.1): no 206 can state it, so the whole, empty file, not a 416.
  if (validators.size === 0) return WHOLE
  const parse = await (rangeModule ??= loadRangeParser())
  const ranges = parse(validators.size, clampSuffixes(header, validators.size), { combine: true })
  if (ranges === -1) return { status: 416 }
  // Malformed, another unit, or several ranges (a multipart/byteranges body): the whole file,
  // which RFC 9110 §14.2 allows and `send` does too.
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return WHOLE
  return { status: 206, start: ranges[0]!.start, end: ranges[0]!.end }
}

// If-Match (any of its tags, weakly compared as `send` does: ours are weak) and, without it,
// If-Unmodified-Since. A date that does not parse is ignored (RFC 9110 §13.1.4).
function preconditionFails(request: FwRequest, validators: FileValidators): boolean {
  const match = request.getHeaderLine('if-match')
  if (match !== '') return match.trim() !== '*' && !listsTag(match, validators.etag)
  const unmodifiedSince = httpDate(request.getHeaderLine('if-unmodified-since'))
  return !Number.isNaN(unmodifiedSince) && Date.parse(validators.lastModified) > unmodifiedSince
}

// If-Range: a range only while the file is the one the client has part of. A date holds only
// when it is the Last-Modified exactly (RFC 9110 §13.1.5): a file replaced by one dated earlier
// (`cp -p`, `rsync -t`, `tar x` of an older version) is older than the date, and its bytes
// spliced onto the client's part of the other file.
function ifRangeHolds(ifRange: string, validators: FileValidators): boolean {
  if (ifRange === '') return true
  if (ifRange.includes('"')) return sameTag(ifRange.trim(), validators.etag)
  const date = httpDate(ifRange)
  return !Number.isNaN(date) && Date.parse(validators.lastModified) === date
}

// RFC 9110 §14.1.2: a suffix longer than the file asks for the whole file, which range-parser
// would call unsatisfiable (a 416); so such a suffix is cut to the file's size first.
function clampSuffixes(header: string, size: number): string {
  return header.replace(/([=,]\s*)-\s*(\d+)/g, (spec, lead: string, length: string) =>
    Number(length) > size ? `${lead}-${size}` : spec,
  )
}

// An HTTP-date (RFC 9110 §5.6.7) in any of its three forms, else NaN: IMF-fixdate
// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
// (`Sun Nov  6 08:49:37 1994`), all GMT. Not Date.parse: it takes `1` or `2100` for a year,
// reads a date without a zone in the server's time zone (TZ), and rolls impossible dates over
// (`31 Feb` is 3 March, second 61 is second 0 of the same minute), where a value that is no
// valid date must be ignored (RFC 9110 §13.1.3, §13.1.4). A leap second (`:60`) is valid.
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d?) (\w{3}) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/
const RFC_850 =
  /^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (\d\d)-(\w{3})-(\d\d) (\d\d):(\d\d):(\d\d) GMT$/
const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\w{3}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})$/
const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec'

function httpDate(value: string): number {
  const asc = ASCTIME.exec(value)
  // [day, month, year, hour, minute, second]
  const m = asc
    ? [asc[2], asc[1], asc[6], asc[3], asc[4], asc[5]]
    : (IMF_FIXDATE.exec(value) ?? RFC_850.exec(value))?.slice(1)
  if (!m) return NaN
  const field = (i: number): number => Number(m[i])
  const [day, hour, minute, second] = [field(0), field(3), field(4), field(5)]
  const at = MONTHS.indexOf(m[1]!) // a month's place times 3; 'anF' and others elsewhere
  const month = at / 3
  let year = field(2)
  if (m[2]!.length === 2) {
    // RFC 850's two-digit year: one more than 50 years ahead is the last such year past.
    const now = new Date().getUTCFullYear()
    year += now - (now % 100)
    if (year > now + 50) year -= 100
  }
  // setUTCFullYear, not Date.UTC: that reads a year 0 to 99 as 1900 + year (`0094` as 1994).
  const time = new Date(0).setUTCFullYear(year, month, day) + (hour * 60 + minute) * 60_000
  // A day past its month's end rolls into the next month; a leap second is the next minute's start.
  if (
    at % 3 !== 0 ||
    new Date(time).getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 60
  )
    return NaN
  return time + second * 1000
}

// An entity tag of a list (RFC 9110 §8.8.3): quoted (a comma may stand inside the quotes), or a
// bare token as a client echoes a malformed ETag (`v1`) back.
const LISTED_TAG = /(?:W\/)?"[^"]*"|[^\s,]+/g

/** Whether the list of entity tags `list` holds `etag`, compared weakly (W/ ignored). */
function listsTag(list: string, etag: string): boolean {
  for (const [tag] of list.matchAll(LISTED_TAG)) if (sameTag(tag, etag)) return true
  return false
}

function sameTag(a: string, b: string): boolean {
  return a.replace(/^W\//, '') === b.replace(/^W\//, '')
}
