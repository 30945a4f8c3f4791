/** Loggers: pino (JSON lines) by default, or a silent one for tests. */
import { pino, stdSerializers, type DestinationStream } from 'pino'
import { FwError } from '../shared/errors.js'
import type { Logger } from './types.js'

/**
 * The default logger: pino JSON lines on stdout (or `destination`), `info` in production,
 * `debug` otherwise. A logged `err` never carries credentials (see `serializeError`).
 */
export function createLogger(
  env: string,
  level = process.env.LOG_LEVEL,
  destination?: DestinationStream,
): Logger {
  const options = {
    level: level ?? (env === 'production' ? 'info' : 'debug'),
    base: { pid: process.pid },
    serializers: { err: serializeError },
  }
  return destination ? pino(options, destination) : pino(options)
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

// Fields whose values are credentials wherever they sit in a logged error: request and response
// headers (an HttpError's Set-Cookie, an HTTP client error's config.headers.Authorization) and
// body fields.
const SECRET_KEY =
  /^(?:(?:proxy-)?authorization|(?:set-)?cookie|password|passwd|secret|client_secret|api[-_]?key|x-api-key|(?:access_|refresh_|id_)?token)$/i
// How deep into a logged error credentials are looked for (axios: err.config.headers.X is 3).
const SECRET_DEPTH = 4

/**
 * pino's `err` serializer, made safe: credentials (SECRET_KEY) are `[Redacted]`, and an error it
 * cannot read (frozen, a getter or Proxy trap that throws) is described rather than lost with
 * its log line. Runs only when an error is logged.
 */
function serializeError(err: unknown): unknown {
  try {
    return redactSecrets(stdSerializers.err(err as Error))
  } catch {
    return describeThrown(err)
  }
}

/**
 * `value` as JSON will show it, with credential fields (SECRET_KEY, down to SECRET_DEPTH)
 * `[Redacted]`: a copy, never the logged object itself; a `toJSON` (Date, Buffer, a headers
 * class) is applied first. `fw serve`'s readable logger shows a thrown non-Error through it.
 * @example
 * redactSecrets({ config: { headers: { Authorization: 'Bearer x' } } }) // … Authorization: '[Redacted]'
 */
export function redactSecrets(value: unknown): unknown {
  return redact(value, 0)
}

function redact(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || depth > SECRET_DEPTH) return value
  const json = (value as { toJSON?: unknown }).toJSON
  if (typeof json === 'function') return redact(json.call(value), depth + 1)
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1))
  const copy: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value))
    copy[key] = SECRET_KEY.test(key) ? '[Redacted]' : redact(field, depth + 1)
  return copy
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
