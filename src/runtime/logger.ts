/** Loggers: pino (JSON lines) by default, or a silent one for tests. */
import { pino } from 'pino'
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
