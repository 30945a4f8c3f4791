/**
 * How `fw serve` ends when the app throws where nothing catches it: a timer's or an event's
 * callback that throws, a promise rejected with nobody to handle it. As Node does by default
 * (unhandled rejections included, since Node 15), the process exits with code 1, since its state
 * is no longer known to be sound; before that the error is logged once through the app's logger
 * (a JSON line in production, with credentials redacted), the server stops accepting and the
 * requests in flight get CRASH_DRAIN_MS to finish. A supervisor (systemd, Kubernetes, the
 * --workers primary) then starts a fresh process. Under `fw serve --watch` the error is logged
 * and the server keeps running, so that the fix, once saved, is reloaded. An app that listens for
 * the event itself decides instead, as without fw.
 */
import type { Logger } from '../runtime/types.js'
import { isOutputGone } from '../shared/closed-output.js'
import { appListens, listenAsFw } from '../shared/process-listeners.js'

/**
 * Shorter than the drain after a stop signal (10 s): a single process stops listening for the
 * whole drain, and only a fresh one listens again.
 */
export const CRASH_DRAIN_MS = 2_000

export interface CrashSignal {
  /** Resolves with the first uncaught exception or unhandled rejection. */
  received: Promise<unknown>
}

const MESSAGES = {
  uncaughtException: 'Uncaught exception: the server stops (exit code 1)',
  unhandledRejection: 'Unhandled promise rejection: the server stops (exit code 1)',
} as const

// Under --watch, a development loop: the developer fixes the code and the watcher reloads it, as
// Next.js's and Nuxt's development servers keep running.
const KEPT_RUNNING = {
  uncaughtException:
    'Uncaught exception: fw serve --watch keeps running (without --watch the server stops)',
  unhandledRejection:
    'Unhandled promise rejection: fw serve --watch keeps running (without --watch the server stops)',
} as const

/**
 * Listens for uncaught exceptions and unhandled rejections from now on: each is logged through
 * `log()` (the current kernel's logger), and the first resolves `received` (never, with
 * `keepRunning`: `fw serve --watch` goes on serving). Listening keeps Node
 * from ending the process itself; the caller drains
 * and exits. The listeners stay for the process's life: an error during a stop by signal is
 * logged too, and the process still exits 1; a second one (or one raised while an error is
 * logged) is logged if it can be and ends the process at once, with code 1, so that a log output
 * that fails cannot turn one error into an endless loop of them.
 * @example
 * const crash = listenForCrash(() => kernel.log)
 * await crash.received // then drain and process.exit(1)
 */
export function listenForCrash(
  log: () => Logger,
  { keepRunning = false }: { keepRunning?: boolean } = {},
): CrashSignal {
  let resolve!: (error: unknown) => void
  const received = new Promise<unknown>((r) => (resolve = r))
  // Set while an error is logged, and from the first error that ends the process.
  let logging = false
  let crashed = false
  let outputGone = false
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    const listener = (error: unknown): void => {
      // An app that listens for the event itself decides, as it would without fw.
      if (appListens(event)) return
      // Raised by logging the error before (a logger that fails from within): logging this one
      // would raise another, and so on. It ends at once.
      if (logging) process.exit(1)
      // Under --watch nothing ends: a log output gone (EIO, EPIPE) whose failed writes come back
      // as uncaught errors is said once, and then dropped, so that its log lines end too.
      if (keepRunning && isOutputGone(error)) {
        if (outputGone) return
        outputGone = true
      }
      logging = true
      try {
        log().error({ err: error }, (keepRunning ? KEPT_RUNNING : MESSAGES)[event])
      } catch {
        // A logger that throws must not turn one crash into a loop of them.
      } finally {
        logging = false
      }
      if (keepRunning) return
      // A failing log output (a closed terminal) while the first error's drain runs: each failed
      // write came back as another error, each failing to be logged in turn, the process spinning
      // for ever. It ends at once then; any other second error lets the drain finish.
      if (crashed && isOutputGone(error)) process.exit(1)
      crashed = true
      // However the process then ends (this crash, or the drain of a stop signal already under
      // way), it ends with code 1.
      process.exitCode = 1
      resolve(error)
    }
    listenAsFw(event, listener)
  }
  return { received }
}
