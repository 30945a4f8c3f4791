/**
 * The error boundary: turns what was thrown into a response. Typed HttpErrors render their status,
 * public message and headers; anything else is a 500 whose details go to the log and never to the
 * client (unless debug is on outside production). The body format is negotiated from Accept:
 * JSON `{ error, code, request_id? }` by default, RFC 9457 problem+json, or text/plain.
 */
import { STATUS_CODES } from 'node:http'
import { describeStatus, HttpError, type HeaderMap } from './http-error.js'
import { FwResponse } from './response.js'
import { logRepeating } from './log-repeats.js'
import type { Logger } from './types.js'
import { within } from '../shared/within.js'

/** What the renderer needs to know about the failed request. */
export interface ErrorContext {
  accept: string
  path: string
  requestId: string | undefined
  debug: boolean
  log: Logger
  /** The request's method, its route's name and its trace id, for the log (kernel-rescue.ts). */
  method?: string | undefined
  route?: string | null | undefined
  traceId?: string | undefined
}

/** Replaces the default renderer (spec: "the final renderer can be replaced"). */
export type ErrorRenderer = (
  error: HttpError,
  context: ErrorContext,
) => FwResponse | Promise<FwResponse>

/**
 * `answer` (a custom renderer's result) if it settles within `ms`, else a rejection naming the
 * renderer: one that never settles would leave its request unanswered, and the connection open,
 * for good. The timer is unref'd and cleared once the answer settles.
 * @example
 * const rendered = await settleWithin(renderer(error, context), 5000)
 */
export function settleWithin<T>(answer: T | Promise<T>, ms: number): T | Promise<T> {
  // A thenable too (a custom promise library's, or a hand-written one that never settles).
  if (typeof (answer as { then?: unknown } | null)?.then !== 'function') return answer
  return within(
    answer as Promise<T>,
    ms,
    `The custom error renderer did not answer within ${ms} ms`,
  )
}

/** The headers of every error response (DESIGN): for handlers that answer an error themselves. */
export const ERROR_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
})
// A 401 must say how to authenticate (RFC 9110 §15.5.2): bearer tokens, unless the error says.
const CHALLENGE = { 'www-authenticate': 'Bearer' }

/**
 * Normalises anything thrown into an HttpError, logging what is not one. Never throws: a thrown
 * Proxy whose traps throw, or an Error whose message getter does, is an unhandled error like
 * any other.
 */
export function toHttpError(thrown: unknown, context: ErrorContext): HttpError {
  const fields = (): Record<string, unknown> => ({
    err: loggable(thrown),
    ...requestFields(context),
  })
  const typed = isHttpError(thrown)
  if (typed && !isErrorStatus(thrown.status)) {
    // `new HttpError(200)` or `(600)`: an error that says all went well, or no status at all.
    // As Express's finalhandler does, it is a 500, and the log says why.
    context.log.error(
      fields(),
      `An HttpError has status ${describeStatus(thrown.status)}, not an error status (400-599)`,
    )
    return new HttpError(500, { cause: thrown })
  }
  if (typed) {
    if (thrown.status >= 500) logServerError(thrown, fields(), context.log)
    return thrown
  }
  context.log.error(fields(), 'Unhandled error')
  return new HttpError(500, { cause: thrown, ...(context.debug ? debugBody(thrown) : {}) })
}

/**
 * What a log line about a failed request says of it: an operator finds the request (method, path,
 * route name) and joins the line to the proxy's (request_id) and to the trace (trace_id).
 */
export function requestFields(context: ErrorContext): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  if (context.method !== undefined) fields.method = context.method
  fields.path = context.path
  if (context.route != null) fields.route = context.route
  fields.request_id = context.requestId
  if (context.traceId !== undefined) fields.trace_id = context.traceId
  return fields
}

/**
 * A typed 5xx, logged unless one of its status and message was logged within the last minute
 * (log-repeats.ts). Not its cause's message: one that carries input would make every error a kind
 * of its own.
 */
function logServerError(error: HttpError, fields: Record<string, unknown>, log: Logger): void {
  logRepeating(log, `${error.status} ${error.message}`, fields, error.message)
}

/**
 * `thrown` as the log can show it: JSON leaves out undefined, a Symbol and a function, so
 * `Promise.reject()` or `throw Symbol('x')` was logged with nothing about what was thrown.
 */
function loggable(thrown: unknown): unknown {
  // Not the function's name or source: a Proxy's trap, or a getter, may throw.
  if (typeof thrown === 'function') return '[a function]'
  return thrown === undefined || typeof thrown === 'symbol' ? String(thrown) : thrown
}

// `instanceof` runs a Proxy's getPrototypeOf trap, which may throw.
function isHttpError(thrown: unknown): thrown is HttpError {
  try {
    return thrown instanceof HttpError
  } catch {
    return false
  }
}

/** The `debug` body field of an unhandled Error: its message and stack, when they can be read. */
function debugBody(thrown: unknown): { body: Record<string, unknown> } | undefined {
  try {
    if (thrown instanceof Error)
      return { body: { debug: { message: String(thrown.message), stack: thrown.stack } } }
  } catch {
    // A getter or trap that throws: the 500 goes out without the details.
  }
  return undefined
}

function isErrorStatus(status: unknown): boolean {
  return Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599
}

/**
 * The default renderer. The error's own headers are sent, but never over Cache-Control and
 * X-Content-Type-Options (an error is never cached, nor sniffed) nor Content-Length and
 * Transfer-Encoding (the body's own), and its `body` adds fields but
 * never replaces `code` (or `status`) and `request_id`, which are the boundary's.
 * @example
 * renderError(notFound(), { accept: 'application/problem+json', path: '/x', ... })
 */
export function renderError(error: HttpError, context: ErrorContext): FwResponse {
  try {
    return renderWith(error, context)
  } catch (failure) {
    // Headers or a message that cannot be read (a getter or a Proxy trap that throws): the
    // request still gets the boundary's answer, with its id, rather than the adapter's last resort.
    context.log.error(
      { err: failure, ...requestFields(context) },
      'The error response cannot be rendered',
    )
    return renderWith(new HttpError(500), context)
  }
}

/** The headers an answer to `error` carries: its own, a 401's challenge, ERROR_HEADERS last. */
function errorHeaders(error: HttpError): HeaderMap {
  const challenge =
    error.status === 401 &&
    !Object.keys(error.headers).some((name) => name.toLowerCase() === 'www-authenticate')
  // Names are lowercased in order by the response: ERROR_HEADERS, last, win over any casing. A
  // Content-Length or Transfer-Encoding among the error's headers is dropped by the response,
  // which frames a string body by its own length.
  return { ...(challenge ? CHALLENGE : {}), ...error.headers, ...ERROR_HEADERS }
}

/**
 * A custom renderer's answer to `error` with the headers it left out: the ones its status needs
 * (a 405's Allow, a 401's challenge, a 429's Retry-After: those of the error, when it answers the
 * error's status) and ERROR_HEADERS. What the renderer set stays.
 * @example
 * withErrorHeaders(json({ oops: true }, 405), methodNotAllowed(['GET'])) // with allow: GET
 */
export function withErrorHeaders(response: FwResponse, error: HttpError): FwResponse {
  const wanted = response.status === error.status ? errorHeaders(error) : ERROR_HEADERS
  const missing: HeaderMap = {}
  let any = false
  for (const [name, value] of Object.entries(wanted)) {
    if (response.header(name) !== undefined) continue
    missing[name] = value
    any = true
  }
  return any ? response.withHeaders(missing) : response
}

function renderWith(error: HttpError, context: ErrorContext): FwResponse {
  const headers = errorHeaders(error)
  const message = error.publicMessage
  const format = pickFormat(context.accept)
  if (format === 'text') {
    return new FwResponse(
      error.status,
      { ...headers, 'content-type': 'text/plain; charset=utf-8' },
      message + '\n',
    )
  }
  const body: Record<string, unknown> =
    format === 'problem'
      ? {
          type: 'about:blank',
          title: STATUS_CODES[error.status] ?? 'Error',
          status: error.status,
          detail: message,
          instance: context.path,
        }
      : { error: message, code: error.status }
  const type = format === 'problem' ? 'application/problem+json' : 'application/json; charset=utf-8'
  return new FwResponse(
    error.status,
    { ...headers, 'content-type': type },
    serializeBody(body, error, context),
  )
}

/** `body` with the error's extra fields, which may not replace the status or the request id. */
function serializeBody(
  body: Record<string, unknown>,
  error: HttpError,
  context: ErrorContext,
): string {
  const id = context.requestId
  if (id !== undefined) body.request_id = id
  if (error.body === undefined) return JSON.stringify(body)
  try {
    const merged: Record<string, unknown> = { ...body, ...error.body }
    if ('code' in body) merged.code = body.code
    if ('status' in body) merged.status = body.status
    if (id === undefined) delete merged.request_id
    else merged.request_id = id
    return JSON.stringify(merged)
  } catch (failure) {
    // A BigInt, a cycle or a getter that throws in the extra fields: the error still gets its
    // answer, without them.
    context.log.error({ err: failure, path: context.path }, 'The error body cannot be serialized')
    return JSON.stringify(body)
  }
}

type Format = 'json' | 'problem' | 'text'

// Only the first ranges count, as in `negotiate`: any 404 reads Accept, and 16 KiB of it (Node's
// header limit) cost ~6 ms per answer when every range was weighed (~0.01 ms for a browser's,
// which sends under 20).
const MAX_RANGES = 32
// A range's weight, its first `q` parameter, found without splitting a range of 16 KiB of ';'.
const WEIGHT = /;[ \t]*q=([^;]*)/

// The formats the boundary renders, by media type, in the order that wins a tie.
const FORMATS: ReadonlyArray<readonly [Format, string]> = [
  ['json', 'application/json'],
  ['problem', 'application/problem+json'],
  ['text', 'text/plain'],
]

/**
 * JSON unless the client rates problem+json or plain text higher (RFC 9110 §12.5.1). A type
 * takes the q-value of the most specific range that matches it (`text/plain`, then `text/*`,
 * then any type), so a type refused by name (`q=0`) is never sent through a wildcard; a tie goes
 * to the more specific match, then the range listed first, then JSON. JSON when none is
 * acceptable.
 */
function pickFormat(accept: string): Format {
  if (accept === '' || accept === '*/*') return 'json'
  const ranges = accept.toLowerCase().split(',', MAX_RANGES)
  let best: Format = 'json'
  let bestRank = 0
  for (const [format, type] of FORMATS) {
    const rank = rankOf(type, ranges)
    if (rank > bestRank) {
      best = format
      bestRank = rank
    }
  }
  return best
}

/**
 * How the client rates `type` (`main/sub`), as one number that orders by q-value (three
 * decimals, RFC 9110 §12.4.2), then specificity, then the earlier range: 0 when unacceptable.
 */
function rankOf(type: string, ranges: string[]): number {
  const wildcard = `${type.slice(0, type.indexOf('/'))}/*`
  let rank = 0
  let specificity = -1
  ranges.forEach((part, order) => {
    const semicolon = part.indexOf(';')
    // White space may stand before the ';' too (`text/plain ; q=0.5`).
    const name = (semicolon === -1 ? part : part.slice(0, semicolon)).trim()
    const found = name === type ? 2 : name === wildcard ? 1 : name === '*/*' ? 0 : -1
    if (found <= specificity) return
    specificity = found
    const q = semicolon === -1 ? 1 : Number(WEIGHT.exec(part)?.[1] ?? 1)
    rank = q > 0 ? (Math.round(q * 1000) * 3 + found) * 1000 + Math.max(999 - order, 0) : 0
  })
  return rank
}
