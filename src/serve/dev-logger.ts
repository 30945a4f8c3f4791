/**
 * `fw serve`'s logs for a developer's terminal: one readable line per entry (an error's stack on
 * the lines below it) instead of pino's JSON lines, which stay the default everywhere else: in
 * production, when the output is not a terminal (a file, a log collector), and in servers that
 * boot the kernel themselves.
 */
import { types } from 'node:util'
import pc from 'picocolors'
import type { Logger } from '../runtime/types.js'
import { ABORTED, COMPLETED, ERRORED, type AccessEntry } from '../runtime/access-log.js'
import { logLevel, redactSecrets, redactText } from '../runtime/logger.js'
import { escapeControls } from '../shared/escape-controls.js'
import { writeLine } from '../shared/closed-output.js'
import { isProduction } from '../shared/app-env.js'
import { FwError } from '../shared/errors.js'

type Level = 'debug' | 'info' | 'warn' | 'error'

// pino's level names, ranked; `trace` shows as debug and `fatal` keeps only errors.
const RANK: Record<string, number> = {
  trace: 0,
  debug: 0,
  info: 1,
  warn: 2,
  error: 3,
  fatal: 3,
  silent: 4,
}
const LABEL: Record<Level, string> = {
  debug: pc.dim('DEBUG'),
  info: pc.cyan('INFO '),
  warn: pc.yellow('WARN '),
  error: pc.red('ERROR'),
}

/**
 * The app's environment and the logger `fw serve` gives its kernel: the config's `kernel.log`,
 * else serveLogger's choice (`null`: the kernel's own pino JSON). Worker and primary alike.
 */
export function appLogging(kernel: { env?: string; log?: Logger } | undefined): {
  env: string
  log: Logger | null
} {
  const env = appEnv(kernel)
  return { env, log: kernel?.log ?? serveLogger(env, process.stdout.isTTY === true) }
}

/** The app's environment: the config's `kernel.env`, else APP_ENV, else development. */
export function appEnv(kernel: { env?: string } | undefined): string {
  const value = kernel?.env ?? process.env.APP_ENV
  return isProduction(value) ? 'production' : (value ?? 'development')
}

/**
 * Which logger `fw serve` gives the kernel: readable lines in development on a terminal; `null`
 * (the kernel's pino JSON) otherwise. LOG_FORMAT=pretty or json decides instead when set.
 */
export function serveLogger(
  env: string,
  isTty: boolean,
  format = process.env.LOG_FORMAT,
): Logger | null {
  // Read as LOG_LEVEL is: any case, empty as unset, and a typo is said rather than ignored.
  const chosen = format?.trim().toLowerCase() || undefined
  if (chosen !== undefined && chosen !== 'json' && chosen !== 'pretty')
    throw new FwError(
      'FW_SERVE_CONFIG',
      `LOG_FORMAT ${JSON.stringify(format)} is not a log format`,
      {
        hint: 'Set LOG_FORMAT to json or pretty, or leave it unset.',
      },
    )
  if (chosen === 'json') return null
  if (chosen === 'pretty' || (env !== 'production' && isTty))
    return devLogger(logLevel(process.env.LOG_LEVEL) ?? 'debug')
  return null
}

/** A Logger writing `HH:MM:SS LEVEL message key=value…` lines from `level` up. */
export function devLogger(
  level: string,
  // Nothing once stdout is gone (a closed terminal): a failed write must not become an error to log.
  write: (line: string) => void = (line) => writeLine(process.stdout, line),
): Logger {
  const min = RANK[level] ?? RANK.debug!
  const at =
    (entry: Level) =>
    (obj: object | string, msg?: string): void => {
      if (RANK[entry]! < min) return
      write(format(entry, obj, msg))
    }
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

// Everything printed from the entry (message, keys, values, stacks) goes through escapeControls:
// only the logger's own colour codes reach the terminal.
function format(level: Level, obj: object | string, msg: string | undefined): string {
  const time = pc.dim(new Date().toTimeString().slice(0, 8))
  if (typeof obj === 'string') return `${time} ${LABEL[level]} ${escapeControls(obj)}`
  if (isAccessEntry(obj, msg)) return `${time} ${LABEL[level]} ${accessLine(obj, msg)}`
  let fields = ''
  let stack = ''
  for (const [key, value] of Object.entries(obj)) {
    const name = pc.dim(`${escapeControls(key)}=`)
    if (key === 'err' && isError(value)) {
      fields += ` ${name}${escapeControls(redactText(String(value.message)))}`
      stack = `\n${pc.dim(stackLines(value).join('\n'))}`
    } else {
      // A thrown non-Error (a plain object, an HTTP client's error) is shown as JSON: redacted.
      const shown = key === 'err' ? redactSecrets(value) : value
      fields += ` ${name}${escapeControls(typeof shown === 'string' ? shown : text(shown))}`
    }
  }
  return `${time} ${LABEL[level]} ${escapeControls(msg ?? '')}${fields}${stack}`
}

/** An access log line's entry (see runtime/access-log.ts), shown compactly. */
function isAccessEntry(obj: object, msg: string | undefined): obj is AccessEntry {
  if (msg !== COMPLETED && msg !== ERRORED && msg !== ABORTED) return false
  const { req, res, responseTime } = obj as Partial<AccessEntry>
  return (
    typeof req === 'object' &&
    req !== null &&
    ['undefined', 'string'].includes(typeof req.method) &&
    ['undefined', 'string'].includes(typeof req.url) &&
    typeof res === 'object' &&
    res !== null &&
    typeof responseTime === 'number'
  )
}

/**
 * `GET /users/42 200 1.2 ms`, as a development server prints a request; `aborted` in the place of
 * the status, or after it, when the client left before the response was sent in full. A request
 * refused at the wire whose request line could not be read shows `?` for its method and target.
 */
function accessLine(entry: AccessEntry, msg: string | undefined): string {
  const code = entry.res.statusCode
  const status = typeof code === 'number' ? statusColour(code)(String(code)) : ''
  const aborted = msg === ABORTED ? pc.yellow('aborted') : ''
  const outcome = [status, aborted].filter(Boolean).join(' ')
  const ms = pc.dim(`${entry.responseTime.toFixed(1)} ms`)
  const { method = '?', url = '?' } = entry.req
  return `${escapeControls(method)} ${escapeControls(url)} ${outcome} ${ms}`
}

function statusColour(code: number): (text: string) => string {
  if (code >= 500) return pc.red
  if (code >= 400) return pc.yellow
  if (code >= 300) return pc.cyan
  return pc.green
}

// An Error of another realm (vm, a worker's structured clone) is not `instanceof Error`.
function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value)
}

// How many causes and aggregated errors below an error are shown (a cause chain can be a cycle).
const MAX_NESTED = 10

/**
 * The stack, indented, one escaped line per frame, then its causes' and an AggregateError's
 * errors' (`caused by: …`, as pino's JSON line has them). Its first line repeats the message,
 * which may hold line breaks of its own: escaped as one line, as on the log line above.
 */
function stackLines(error: Error): string[] {
  const lines: string[] = []
  const seen = new Set<unknown>()
  const add = (thrown: unknown, prefix: string): void => {
    if (seen.has(thrown) || seen.size > MAX_NESTED) return
    seen.add(thrown)
    if (!isError(thrown))
      return void lines.push(`    ${prefix}${escapeControls(text(redactSecrets(thrown)))}`)
    const [head, ...frames] = ownStack(thrown)
    lines.push(`    ${prefix}${head}`, ...frames.map((line) => `    ${line}`))
    if (thrown instanceof AggregateError && Array.isArray(thrown.errors))
      thrown.errors.forEach((inner, i) => add(inner, `[${i}] `))
    if (thrown.cause !== undefined) add(thrown.cause, 'caused by: ')
  }
  add(error, '')
  return lines
}

function ownStack(error: Error): string[] {
  const stack = typeof error.stack === 'string' ? error.stack : String(error)
  const head = error.message === '' ? String(error.name) : `${error.name}: ${error.message}`
  let lines = stack.split('\n')
  if (stack === head) lines = [head]
  else if (stack.startsWith(head + '\n'))
    lines = [head, ...stack.slice(head.length + 1).split('\n')]
  return lines.map((line) => escapeControls(redactText(line)))
}

function text(value: unknown): string {
  try {
    // A BigInt as its digits, as pino writes it (JSON.stringify throws on one).
    const bigints = (_key: string, field: unknown): unknown =>
      typeof field === 'bigint' ? field.toString() : field
    return JSON.stringify(value, bigints) ?? String(value)
  } catch {
    return String(value) // a circular object
  }
}
