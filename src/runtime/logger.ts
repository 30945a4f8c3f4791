/** Loggers: pino (JSON lines) by default, or a silent one for tests. */
import { pino } from 'pino'
import { FwError } from '../shared/errors.js'
import type { Logger } from './types.js'

/** The default logger: pino JSON lines on stdout, `info` in production, `debug` otherwise. */
export function createLogger(env: string, level = process.env.LOG_LEVEL): Logger {
  return pino({
    level: level ?? (env === 'production' ? 'info' : 'debug'),
    base: { pid: process.pid },
  })
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/**
 * The kernel's view of the `log` option: a logger without one of the four methods is a boot
 * error, and a method that throws (a closed file, a broken transport) is caught, so that logging
 * an error never fails or hangs the request being answered. The first failure is reported once
 * as a process warning.
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
  const guard =
    (level: (typeof LEVELS)[number]) =>
    (...args: unknown[]): void => {
      try {
        Reflect.apply(target![level] as (...a: unknown[]) => void, target, args)
      } catch (error) {
        if (warned) return
        warned = true
        process.emitWarning(`fw: the logger's ${level}() threw: ${String(error)}`)
      }
    }
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') }
}
