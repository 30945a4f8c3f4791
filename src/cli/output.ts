/** How the CLI talks: coloured one-line results, and user errors as one line plus a hint. */
import pc from 'picocolors'
import { inAppCode, locateInStack } from '../define/location.js'
import { FwError, formatLocation, ReportedError, type SourceLocation } from '../shared/errors.js'
import { escapeControls } from '../shared/escape-controls.js'
import { isClosedOutput, watchForClosedOutput, writeLine } from '../shared/closed-output.js'
import { listenAsFw } from '../shared/process-listeners.js'
import { thrownMessage, thrownStack } from '../shared/thrown.js'

export interface Output {
  out: (text: string) => void
  err: (text: string) => void
}

// Once the reader of a stream went away (`fw routes:list | head`, a closed terminal), later output
// is dropped.
export const stdio: Output = {
  out: (text) => writeLine(process.stdout, text),
  err: (text) => writeLine(process.stderr, text),
}

/**
 * Stops writing to stdout or stderr once its reader has gone: a pipe's (EPIPE), as
 * `fw routes:list | head` does after ten lines, or a closed terminal's (EIO), as a `fw serve`
 * left running after its terminal window was closed sees (see src/shared/closed-output.ts). The
 * command then goes on quietly instead of crashing with a stack trace on Node's unhandled 'error'
 * event, or looping on it. Other write errors still surface.
 * @example
 * ignoreClosedPipes() // in main(), before the command prints
 */
export function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) watchForClosedOutput(stream)
}

// How long a finished command waits for the process to end by itself before ending it. Not less:
// a registration the routes file makes late (after a database query it started, from a timer) is
// reported as FW_ROUTES_LATE when it comes, and exit 1 then replaces this exit.
const EXIT_GRACE_MS = 3000

/**
 * Ends the process with `code` once stdout and stderr are flushed, when something the routes file
 * started at import (a database pool, a Redis client, a timer) would keep it alive: a finished
 * `fw route:cache build` must not hang a CI job after printing "✔ built". A process with nothing
 * left to do ends by itself first (the timer is unref'd).
 * @example
 * exitWhenFlushed(0) // in main(), once a one-shot command has returned
 */
export function exitWhenFlushed(code: number): void {
  setTimeout(() => {
    const flushed = (stream: NodeJS.WriteStream): Promise<void> =>
      stream.writableLength === 0 || isClosedOutput(stream)
        ? Promise.resolve()
        : new Promise((done) => stream.write('', () => done()))
    void Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() =>
      process.exit(code),
    )
  }, EXIT_GRACE_MS).unref()
}

let strayErrorsPrinted = false

/**
 * Prints an FwError thrown outside the command's own promises, such as a routes file registering
 * from a timer after its function returned (FW_ROUTES_LATE), as every error is printed: one line
 * and a hint, exit 1, instead of Node's raw stack. Anything else keeps Node's default (rethrown).
 * It stands in for Node's default, so it steps aside, as Node's default does, while something
 * else listens for the event: `fw serve` once it serves (its app's logger logs the error, see
 * src/serve/crash.ts), or the app's own listener.
 * @example
 * printStrayErrors(stdio, isDebug(argv)) // in main(), before the command runs
 */
export function printStrayErrors(output: Output, debug: boolean): void {
  if (strayErrorsPrinted) return
  strayErrorsPrinted = true
  const events = ['uncaughtException', 'unhandledRejection'] as const
  const listeners = events.map((event) => (error: unknown) => {
    if (process.listenerCount(event) > 1) return
    // An error of the app's own code (a timer of the routes file that throws, a promise nobody
    // awaits) is the user's to mend: where it was thrown, as a user error, not Node's raw stack.
    // (fw throws only Errors: a thrown string or object is the app's too.)
    const location = error instanceof FwError ? undefined : locateInStack(error, inAppCode)
    if (error instanceof FwError || location !== undefined || !(error instanceof Error)) {
      printError(
        output,
        error instanceof FwError ? error : strayError(event, error, location),
        debug,
      )
      process.exit(1)
    }
    events.forEach((name, i) => process.off(name, listeners[i]!))
    setImmediate(() => {
      throw error
    })
  })
  events.forEach((event, i) => listenAsFw(event, listeners[i]!))
}

/** An error the app threw where nothing caught it, as the user error the CLI prints. */
function strayError(
  event: 'uncaughtException' | 'unhandledRejection',
  error: unknown,
  location: SourceLocation | undefined,
): FwError {
  const what = event === 'uncaughtException' ? 'Uncaught exception' : 'Unhandled promise rejection'
  const message = thrownMessage(error)
  const stray = new FwError('FW_APP_UNCAUGHT', `${what}: ${message}`, {
    location,
    hint: 'A timer, event listener or promise of the app failed where nothing catches it: catch the error there (--debug prints the stack).',
  })
  // --debug prints the stack of what the app threw, not of this wrapper.
  const stack = thrownStack(error)
  if (stack !== '') stray.stack = stack
  return stray
}

export function isDebug(argv: readonly string[]): boolean {
  return argv.includes('--debug') || process.env.FW_DEBUG === '1'
}

/**
 * Prints an error: `error file:line: message [CODE]` and a hint; the stack only in debug. Messages
 * quote what a routes file wrote (a route name, a thrown message): its line breaks and terminal
 * escapes are printed as escapes, so the error stays one line and cannot restyle the terminal.
 */
export function printError(output: Output, error: unknown, debug: boolean): void {
  if (error instanceof ReportedError) return
  if (error instanceof FwError) {
    const where = escapeControls(formatLocation(error.location))
    const message = escapeControls(error.message)
    output.err(
      `${pc.red('error')} ${where ? pc.bold(where) + ': ' : ''}${message} ${pc.dim(`[${error.code}]`)}`,
    )
    if (error.hint) output.err(`  ${pc.cyan('hint:')} ${escapeControls(error.hint)}`)
  } else {
    const message = escapeControls(thrownMessage(error))
    output.err(`${pc.red('error')} ${message}`)
    output.err(
      `  ${pc.cyan('hint:')} this looks like a bug in fw; run again with --debug and report the stack`,
    )
  }
  if (debug) {
    const stack = (e: unknown): string => thrownStack(e) || thrownMessage(e)
    output.err(pc.dim(stack(error)))
    const cause = causeOf(error)
    if (cause) output.err(pc.dim(`cause: ${stack(cause)}`))
  }
}

function causeOf(error: unknown): unknown {
  try {
    return error instanceof Error ? error.cause : undefined
  } catch {
    return undefined
  }
}
