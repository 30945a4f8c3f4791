/**
 * How `fw serve` stops: the first SIGTERM, SIGINT or SIGHUP (its terminal closed) starts a drain (no
 * new connections, in-flight requests finish, for up to 10 s); a repeated SIGTERM changes nothing, since process managers
 * and scripts repeat it and it must not cut off the requests the first one let finish; a second
 * SIGINT (Ctrl-C twice) is a person who does not want to wait: the requests are cut off at once.
 */
import type { RunningServer } from './server.js'

/** How long in-flight requests may run after the stop signal before they are cut off. */
export const DRAIN_MS = 10_000
/** How long, once stopped, what the app left open may keep the process running. */
export const LEFT_OPEN_MS = 5_000

export interface StopSignal {
  /** Resolves with the first signal's name. */
  received: Promise<NodeJS.Signals>
  /** Called on a second SIGINT; until then (and after `dispose`) it does nothing. */
  onInterruptAgain(cut: () => void): void
  /** Removes the listeners (a process that keeps running, such as a test, keeps none behind). */
  dispose(): void
}

/**
 * Listens for SIGTERM, SIGINT and SIGHUP from now on. SIGHUP (the terminal closed, or a kill -HUP)
 * drains as SIGTERM does: what is written to the closed terminal is dropped (closed-output.ts).
 */
export function listenForStop(): StopSignal {
  let resolve!: (signal: NodeJS.Signals) => void
  const received = new Promise<NodeJS.Signals>((r) => (resolve = r))
  let first: NodeJS.Signals | null = null
  let cut: (() => void) | null = null
  const on = (signal: NodeJS.Signals): void => {
    if (first === null) {
      first = signal
      return resolve(signal)
    }
    if (signal === 'SIGINT') cut?.()
  }
  process.on('SIGTERM', on)
  process.on('SIGINT', on)
  process.on('SIGHUP', on)
  return {
    received,
    onInterruptAgain: (fn) => {
      cut = fn
    },
    dispose: () => {
      process.off('SIGTERM', on)
      process.off('SIGINT', on)
      process.off('SIGHUP', on)
    },
  }
}

/**
 * Stops accepting connections and waits for the in-flight requests, cutting them off after
 * `limit.ms` (DRAIN_MS after a stop signal) or when `stop.onInterruptAgain` fires.
 */
export async function drain(
  server: RunningServer,
  stop: StopSignal,
  warn: (line: string) => void,
  limit = { ms: DRAIN_MS, after: 'the stop signal' },
): Promise<void> {
  let cut = false
  const cutOff = (why: string): void => {
    if (cut) return
    cut = true
    warn(`cut off the in-flight requests still running ${why}`)
    server.server.closeAllConnections()
  }
  // Idle connections are closed after a short grace and then as they turn idle (server.close):
  // what is left at the deadline is still working.
  const timer = setTimeout(() => cutOff(`${limit.ms / 1000} s after ${limit.after}`), limit.ms)
  timer.unref()
  stop.onInterruptAgain(() => cutOff('at the second Ctrl-C'))
  await server.close()
  clearTimeout(timer)
}

/**
 * Once stopped, nothing the app left open (a timer or a connection its routes or config file
 * made) keeps the process running: it exits LEFT_OPEN_MS later, saying so. The timer is unref'd:
 * a process with nothing left open exits at once.
 */
export function exitIfLeftOpen(after: string, warn: (line: string) => void): void {
  setTimeout(() => {
    warn(`something the app opened was still open ${LEFT_OPEN_MS / 1000} s after ${after}; exiting`)
    process.exit(process.exitCode ?? 0)
  }, LEFT_OPEN_MS).unref()
}
