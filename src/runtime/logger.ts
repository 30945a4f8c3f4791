/** Loggers: pino (JSON lines) by default, or a silent one for tests. */
import { hostname } from 'node:os'
import { pino, stdSerializers, type DestinationStream } from 'pino'
import { isOutputGone } from '../shared/closed-output.js'
import { FwError } from '../shared/errors.js'
import { isSecretName, isSecretParam } from '../shared/secret-names.js'
import { maskSecretParams } from '../shared/redact-url.js'
import type { Logger } from './types.js'

/**
 * The default logger: pino JSON lines on stdout (or `destination`), `info` in production,
 * `debug` otherwise. A logged `err` never carries credentials (see `serializeError`). A `level`
 * that is no pino level name (any case; empty is unset) throws an FwError FW_SERVE_CONFIG.
 */
export function createLogger(
  env: string,
  level = process.env.LOG_LEVEL,
  destination?: DestinationStream,
): Logger {
  const options = {
    level: logLevel(level) ?? (env === 'production' ? 'info' : 'debug'),
    // As pino's own default: which machine a line came from, once several ship to one place.
    base: { pid: process.pid, hostname: hostname() },
    serializers: { err: serializeError },
  }
  if (destination) return pino(options, destination)
  // stdout not read (a stalled log shipper, `| less` left open): past MAX_BUFFERED bytes waiting,
  // lines are dropped and counted, rather than kept in memory until the process runs out of it
  // (an error per request, unread, grew it by 500 MB in 25 s). The count is logged once it drains.
  const stdout = pino.destination({ dest: process.stdout.fd || 1, maxLength: MAX_BUFFERED })
  const logger = pino(options, stdout)
  // stdout gone (a closed terminal: EIO; pino itself stops at EPIPE): later lines are dropped,
  // quietly. Unheard, the error was an uncaught exception, whose log line failed again, for ever.
  stdout.on('error', (error: unknown) => {
    if (!isOutputGone(error)) throw error
    stdout.write = () => true
    stdout.flushSync = () => {}
    stdout.end = () => {}
  })
  let dropped = 0
  stdout.on('drop', () => void dropped++)
  stdout.on('drain', () => {
    if (dropped === 0) return
    const lost = dropped
    dropped = 0
    logger.warn({ dropped: lost }, `${lost} log lines were dropped: the log output was not read`)
  })
  return logger
}

// How many bytes of log lines wait for a stdout that is not read before new ones are dropped.
const MAX_BUFFERED = 16 * 1024 * 1024
// pino's level names (its own levels and `silent`).
const LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']

/**
 * LOG_LEVEL as pino takes it (any case, spaces around it ignored); undefined when unset or empty
 * (`LOG_LEVEL=` in an env file): the default then. Any other value is a boot error: pino's own
 * ("default level:verbose must be included in custom levels") read as a bug in fw.
 * @example
 * logLevel(' Info ') // 'info'
 */
export function logLevel(value: string | undefined): string | undefined {
  const level = value?.trim().toLowerCase()
  if (level === undefined || level === '') return undefined
  if (LEVEL_NAMES.includes(level)) return level
  throw new FwError('FW_SERVE_CONFIG', `LOG_LEVEL ${JSON.stringify(value)} is not a log level`, {
    hint: `Set LOG_LEVEL to one of ${LEVEL_NAMES.join(', ')}, or leave it unset.`,
  })
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

// How deep into a logged error credentials are looked for (axios: err.response.request.res.headers
// is 5). Deeper objects are not logged at all: what is not looked at is not shown.
const SECRET_DEPTH = 8
// Credentials inside text: a raw header block (axios keeps the request it sent as `_header`), a
// bearer token, a JWT in a message ("invalid token eyJ…"), a body kept as text (axios'
// config.data) with a JSON or form field; a header or field counts when isSecretName takes its
// name, as an object key. Text can come from a client, so every pattern is linear: a match starts
// only where a run of its characters starts (the lookbehinds), and text is cut at MAX_TEXT.
const HEADER_LINE = /^([A-Za-z0-9-]{1,64})([ \t]*:).*$/gm
const BEARER = /\b(Bearer|Basic)[ \t]+[^\s"',;]+/gi
const JWT = /(?<![\w-])eyJ[\w-]*\.[\w-]+\.[\w-]*/g
// A JSON string value runs to its closing quote, or to the end of text cut short.
const JSON_FIELD = /"([^"\\]{1,64})"(\s*:\s*)"(?:[^"\\]|\\.)*"?/g
const FORM_FIELD = /(?<![\w.-])([\w.-]{1,64})=[^&\s"]*/g
const MAX_TEXT = 16 * 1024

/**
 * pino's `err` serializer, made safe: credentials (fields isSecretName takes, header lines, bearer
 * tokens and JWTs in text) are `[Redacted]`, and an error it cannot read (frozen, a getter or
 * Proxy trap that throws) is described rather than lost with its log line. Runs only when an
 * error is logged.
 */
function serializeError(err: unknown): unknown {
  // Made by fw, its message already redacted: read as an error, it was given pino's type
  // ('ErrorReference') and an empty stack.
  if (err instanceof ErrorReference) return err
  try {
    return redactSecrets(stdSerializers.err(err as Error))
  } catch {
    return describeThrown(err)
  }
}

/**
 * `value` as JSON will show it, with credentials `[Redacted]` (fields named like one, down to
 * SECRET_DEPTH, and header lines, bearer tokens and JWTs in any text): a copy, never the logged
 * object itself; a `toJSON` (Date, Buffer, a headers class) is applied first. `fw serve`'s
 * readable logger shows a thrown non-Error through it.
 * @example
 * redactSecrets({ config: { headers: { Authorization: 'Bearer x' } } }) // … Authorization: '[Redacted]'
 */
export function redactSecrets(value: unknown): unknown {
  return redact(value, 0)
}

function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value)
  if (typeof value !== 'object' || value === null) return value
  if (depth > SECRET_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]'
  const json = (value as { toJSON?: unknown }).toJSON
  if (typeof json === 'function') return redact(json.call(value), depth + 1)
  // Name-value lists (Node's rawHeaders: ['Set-Cookie', 'sid=…']): a value after a secret name.
  if (Array.isArray(value))
    return value.map((item, i) =>
      i > 0 && typeof value[i - 1] === 'string' && isSecretName(value[i - 1] as string)
        ? '[Redacted]'
        : redact(item, depth + 1),
    )
  const copy: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value))
    copy[key] = isSecretName(key) ? '[Redacted]' : redact(field, depth + 1)
  return copy
}

/**
 * `text` with the credentials in it `[Redacted]`: header lines, bearer tokens, JWTs, body fields.
 * Past MAX_TEXT characters it is cut: a log line needs no megabyte body.
 */
export function redactText(text: string): string {
  return capped(text, (shown) =>
    shown
      .replace(HEADER_LINE, (line, name: string, colon: string) =>
        isSecretName(name) ? `${name}${colon} [Redacted]` : line,
      )
      .replace(BEARER, '$1 [Redacted]')
      .replace(JWT, '[Redacted]')
      .replace(JSON_FIELD, (field, name: string, colon: string) =>
        isSecretName(name) ? `"${name}"${colon}"[Redacted]"` : field,
      )
      .replace(FORM_FIELD, (field, name: string) =>
        isSecretName(name) ? `${name}=[Redacted]` : field,
      ),
  )
}

// A JWT the cut ended in (without its signature, JWT misses it): its header and claims are shown
// otherwise.
const CUT_JWT = /(?<![\w.-])eyJ[\w-]*(?:\.[\w-]*){0,2}$/

/** `redact` of `text`'s first `max` characters, saying how many more were cut. */
function capped(text: string, redact: (shown: string) => string, max = MAX_TEXT): string {
  if (text.length <= max) return redact(text)
  const shown = text.slice(0, max).replace(CUT_JWT, '[Redacted]')
  return `${redact(shown)}… [${text.length - max} more characters]`
}

/**
 * A request target (path and query, as the client sent it) as the access log shows it: the value
 * of a query parameter that names a credential (`token`, `api_key`, `password`, a pre-signed
 * URL's `X-Amz-Signature`, an OAuth `code`: `isSecretParam`, the name decoded) or is a signed
 * URL's `_sig` `[Redacted]`, and so is a JWT anywhere in it, also one the cut ends in; cut at
 * `max` characters (MAX_TEXT).
 * @example
 * redactTarget('/files/7?_exp=1700000000&_sig=ab12') // '/files/7?_exp=1700000000&_sig=[Redacted]'
 */
export function redactTarget(target: string, max = MAX_TEXT): string {
  return capped(
    target,
    (shown) =>
      maskSecretParams(shown.replace(JWT, '[Redacted]'), '[Redacted]', isEncodedSecretParam),
    max,
  )
}

// A query parameter's name as written (`%5Fsig`, `api+key`): read decoded.
function isEncodedSecretParam(name: string): boolean {
  let decoded = name
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    // A malformed escape: the name as written.
  }
  return isSecretParam(decoded)
}

/**
 * What the access log says of the failure behind a 5xx (its `err`): the type, code and message
 * of what was thrown, credentials redacted and cut at REFERENCE_TEXT characters. Not its stack,
 * nor its other fields: the error boundary's own line has them, and the request id (`req.id`,
 * `request_id` there) joins the two.
 */
export class ErrorReference {
  readonly type: string
  readonly code: string | undefined
  readonly message: string

  constructor(thrown: unknown) {
    const error = thrown as NodeJS.ErrnoException
    const isObject = (typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function'
    this.type = readSafely(() => (isObject ? error.constructor.name : typeof thrown))
    const code = isObject ? readSafely(() => error.code) : undefined
    this.code = code === undefined || code === 'undefined' ? undefined : shortened(code)
    const message = readSafely(() => (isObject ? (error.message ?? '') : thrown))
    this.message = shortened(redactText(message))
  }
}

const REFERENCE_TEXT = 200

function shortened(text: string): string {
  return text.length <= REFERENCE_TEXT ? text : `${text.slice(0, REFERENCE_TEXT)}…`
}

/** What can safely be read of something thrown: its type, message and stack, as text. */
function describeThrown(thrown: unknown): Record<string, string> {
  const error = thrown as Error
  return {
    type: readSafely(() => (typeof thrown === 'object' ? error.constructor.name : typeof thrown)),
    message: readSafely(() => error.message),
    stack: readSafely(() => error.stack),
  }
}

function readSafely(get: () => unknown): string {
  try {
    return String(get())
  } catch {
    return '[unreadable]'
  }
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/**
 * The kernel's view of the `log` option: a logger without one of the four methods is a boot
 * error, and a method that throws (a closed file, a broken transport) is caught, so that logging
 * an error never fails or hangs the request being answered. An entry whose `err` the logger
 * cannot serialize (frozen, a throwing getter) is logged again with that error described as
 * text. The first failure is reported once as a process warning.
 * @example
 * const log = guardLogger(options.log) // throws FW_SERVE_CONFIG for { info() {} }
 */
export function guardLogger(log: unknown): Logger {
  const target = log as Record<string, unknown> | null
  const missing = LEVELS.filter((level) => typeof target?.[level] !== 'function')
  if (missing.length > 0) {
    throw new FwError('FW_SERVE_CONFIG', `The log option has no ${missing.join(', ')} method`, {
      hint: 'Pass a logger with debug, info, warn and error (pino, console).',
    })
  }
  let warned = false
  const guard = (level: (typeof LEVELS)[number]) => {
    const call = (args: unknown[]): void =>
      void Reflect.apply(target![level] as (...a: unknown[]) => void, target, args)
    return (...args: unknown[]): void => {
      try {
        call(args)
      } catch (error) {
        try {
          const [fields, ...rest] = args as [{ err?: unknown }, ...unknown[]]
          if (typeof fields !== 'object' || fields === null || !('err' in fields)) throw error
          return call([{ ...fields, err: describeThrown(fields.err) }, ...rest])
        } catch {
          if (warned) return
          warned = true
          process.emitWarning(`fw: the logger's ${level}() threw: ${readSafely(() => error)}`)
        }
      }
    }
  }
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') }
}
