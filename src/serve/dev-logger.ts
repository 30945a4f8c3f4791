/**
 * `fw serve`'s logs for a developer's terminal: one readable line per entry (an error's stack on
 * the lines below it) instead of pino's JSON lines, which stay the default everywhere else: in
 * production, when the output is not a terminal (a file, a log collector), and in servers that
 * boot the kernel themselves.
 */
import pc from 'picocolors'
import type { Logger } from '../runtime/types.js'

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
 * Which logger `fw serve` gives the kernel: readable lines in development on a terminal; `null`
 * (the kernel's pino JSON) otherwise. LOG_FORMAT=pretty or json decides instead when set.
 */
export function serveLogger(
  env: string,
  isTty: boolean,
  format = process.env.LOG_FORMAT,
): Logger | null {
  if (format === 'json') return null
  if (format === 'pretty' || (env !== 'production' && isTty))
    return devLogger(process.env.LOG_LEVEL ?? 'debug')
  return null
}

/** A Logger writing `HH:MM:SS LEVEL message key=value…` lines from `level` up. */
export function devLogger(
  level: string,
  write: (line: string) => void = (line) => void process.stdout.write(line + '\n'),
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

function format(level: Level, obj: object | string, msg: string | undefined): string {
  const time = pc.dim(new Date().toTimeString().slice(0, 8))
  if (typeof obj === 'string') return `${time} ${LABEL[level]} ${obj}`
  let fields = ''
  let stack = ''
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'err' && value instanceof Error) {
      fields += ` ${pc.dim('err=')}${value.message}`
      stack = `\n${pc.dim(indent(value.stack ?? String(value)))}`
    } else {
      fields += ` ${pc.dim(`${key}=`)}${typeof value === 'string' ? value : text(value)}`
    }
  }
  return `${time} ${LABEL[level]} ${msg ?? ''}${fields}${stack}`
}

function text(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value) // a circular object
  }
}

function indent(lines: string): string {
  return lines.replace(/^/gm, '    ')
}
