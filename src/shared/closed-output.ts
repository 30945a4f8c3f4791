/**
 * Output whose reader has gone: a pipe whose reader exited (`fw routes:list | head`, EPIPE), a
 * terminal that was closed while the process kept running (`setsid fw serve &`, EIO), a
 * descriptor that was closed (EBADF). Writing there again fails again: the stream is marked
 * closed, and what is written to it later is dropped quietly, rather than each failed write
 * becoming an uncaught exception whose log line fails in turn, for ever (a process spinning at
 * full CPU that no SIGTERM ends).
 */
import { closeSync, openSync } from 'node:fs'
import { isatty } from 'node:tty'

// Which standard descriptors were terminals when fw started.
const STARTED_AS_TERMINAL = [0, 1, 2].map((fd) => isatty(fd))

/**
 * Whether `error` says the output written to has gone for good: EPIPE (the reader left), EBADF
 * (the descriptor was closed), or EIO once a terminal fw started on has been closed. An EIO of a
 * file (a failing disk) is no such thing: it is not taken for one, and surfaces.
 */
export function isOutputGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'EPIPE' || code === 'EBADF') return true
  return code === 'EIO' && STARTED_AS_TERMINAL.some((was, fd) => was && !isatty(fd))
}

const closed = new WeakSet<NodeJS.WritableStream>()
// The streams listened to (once each: writeLine asks at every line).
const watched = new WeakSet<NodeJS.WritableStream>()

/** Whether `stream` (stdout, stderr) was found gone: what is written to it is dropped. */
export function isClosedOutput(stream: NodeJS.WritableStream): boolean {
  return closed.has(stream)
}

/**
 * Listens for `stream`'s write errors (once, however often called): a gone output is marked
 * closed; any other write error is thrown, as Node's unhandled 'error' event would.
 * @example
 * watchForClosedOutput(process.stdout)
 */
export function watchForClosedOutput(stream: NodeJS.WritableStream): void {
  if (watched.has(stream)) return
  watched.add(stream)
  releaseClosedTerminalOnExit()
  stream.on('error', onWriteError)
}

let hooked = false

/**
 * On exit, Node puts the terminal of stdin, stdout and stderr back as it found it; a terminal
 * closed since (EIO) made Node 20 abort there instead (SIGABRT, a core dump: "Assertion failed"
 * in ResetStdio, nodejs/node#51519, fixed in later Node versions). A standard descriptor that was
 * a terminal at the start and is no longer one is pointed at /dev/null first, which Node skips.
 */
function releaseClosedTerminalOnExit(): void {
  if (hooked) return
  hooked = true
  process.once('exit', () => {
    STARTED_AS_TERMINAL.forEach((wasTerminal, fd) => {
      if (!wasTerminal || isatty(fd)) return
      try {
        closeSync(fd)
        // The lowest free descriptor: the one just closed.
        const opened = openSync('/dev/null', fd === 0 ? 'r' : 'w')
        if (opened !== fd) closeSync(opened)
      } catch {
        // Closed, it is skipped too.
      }
    })
  })
}

function onWriteError(this: NodeJS.WritableStream, error: NodeJS.ErrnoException): void {
  if (!isOutputGone(error)) throw error
  closed.add(this)
}

/**
 * Writes `text` and a line break to `stream`, or nothing once its output is gone.
 * @example
 * writeLine(process.stdout, 'fw serve → http://127.0.0.1:3000')
 */
export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  watchForClosedOutput(stream)
  if (closed.has(stream)) return
  try {
    stream.write(text + '\n')
  } catch (error) {
    // A stream that writes synchronously (a file) throws instead of emitting 'error'.
    if (!isOutputGone(error)) throw error
    closed.add(stream)
  }
}
