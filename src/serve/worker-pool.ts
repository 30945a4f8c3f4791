/**
 * The workers of `fw serve --workers N`, as the primary runs them: forks them on one port,
 * restarts those that crash (and gives up, exit 1, once replacements keep failing to start with
 * none serving), tells them to reload the routes under --watch, and stops them on a signal
 * (killing one still running well after its drain).
 */
import cluster, { type Worker } from 'node:cluster'
import type { AddressInfo } from 'node:net'
import { count } from '../shared/count.js'
import { FwError, ReportedError } from '../shared/errors.js'
import { DRAIN_MS, LEFT_OPEN_MS } from './shutdown.js'

/** The port the primary tells its workers to listen on. */
export const WORKER_PORT = 'FW_SERVE_WORKER_PORT'
/** The primary's message to its workers under --watch: load the routes again. */
export const RELOAD = 'fw:reload-routes'
/** A worker's answer once it has loaded them (or failed to, and said why). */
export const RELOADED = 'fw:routes-reloaded'
/**
 * A worker's last message when it has printed why it could not start (serve.ts): the primary then
 * ends with exit 1 without an error of its own about it. A message, not an exit code: the app's
 * own code may exit with any code, having printed nothing.
 */
export const REPORTED = 'fw:error-reported'
/** How long after a worker's exit its IPC channel may take to say it closed. */
const DISCONNECT_WAIT_MS = 500

/** A worker that exits sooner than this after it was forked counts as a crash loop. */
const QUICK_DEATH_MS = 10_000
/** The longest wait before a replacement for a worker that keeps dying soon after its start. */
const MAX_RESTART_DELAY_MS = 10_000
/**
 * Workers that exit before they listen, this many in a row while none serves, end the primary
 * (exit 1): their cause (a routes file that throws, a provider that fails) is not going away,
 * and a primary with no worker looks alive to its supervisor while the port refuses every
 * connection. With the back-off below that is a few seconds of tries.
 */
const BOOT_FAILURES_TO_GIVE_UP = 5
/** How long the primary waits for its workers after a stop: their drain, then what they left open. */
const STOP_WAIT_MS = DRAIN_MS + LEFT_OPEN_MS + 2_000
/** How long a reload under --watch waits for a worker's answer (one stuck in a loop gives none). */
const RELOAD_WAIT_MS = 10_000

export interface Pool {
  /** Forks `n` workers; resolves once all listen, rejects when one exits first. */
  start(n: number): Promise<void>
  /** Resolves with the error to end with once workers keep failing to start. */
  failed: Promise<FwError>
  /**
   * Stops restarting, SIGTERMs every worker still alive and resolves once they have exited (those
   * still running after STOP_WAIT_MS are killed): true when each ended well.
   */
  stop(): Promise<boolean>
  signal(name: NodeJS.Signals): void
}

/** What the pool does when a worker listens or exits while `start` waits for them. */
interface Startup {
  listened(): void
  fail(error: Error): void
}

/**
 * Forks and restarts the workers of `fw serve --workers N` on `port`.
 * @example
 * const pool = forkPool(3000, (line) => console.warn(line))
 * await pool.start(4)
 */
export function forkPool(port: number, warn: (line: string) => void): Pool {
  return new WorkerPool(port, warn)
}

class WorkerPool implements Pool {
  readonly failed: Promise<FwError>
  readonly #port: number
  readonly #warn: (line: string) => void
  #stopping = false
  #stoppedWell = true
  #startup: Startup | null = null
  // A worker that dies soon after it started will likely die again: each quick death in a row
  // doubles the wait before the next one (0.1 s up to 10 s), so a crash loop cannot eat the CPU.
  #quickDeaths = 0
  #bootFailures = 0
  readonly #serving = new Set<Worker>()
  readonly #killed = new WeakSet<Worker>()
  readonly #reported = new WeakSet<Worker>()
  readonly #restarts = new Set<NodeJS.Timeout>()
  #giveUp!: (error: FwError) => void

  constructor(port: number, warn: (line: string) => void) {
    this.#port = port
    this.#warn = warn
    this.failed = new Promise<FwError>((resolve) => (this.#giveUp = resolve))
  }

  async start(n: number): Promise<void> {
    // One worker first: a start that fails (a port in use) is then reported once, not by each.
    const first = this.#listening(1)
    this.#fork()
    await first
    if (n === 1) return
    // Ready means every worker listens: a request once the banner is out may reach any of them.
    const rest = this.#listening(n - 1)
    for (let i = 1; i < n; i++) this.#fork()
    await rest
  }

  async stop(): Promise<boolean> {
    this.#stopping = true
    for (const timer of this.#restarts) clearTimeout(timer)
    const timer = this.#killStuckLater()
    await Promise.all(liveWorkers().map(terminate))
    clearTimeout(timer)
    return this.#stoppedWell
  }

  signal(name: NodeJS.Signals): void {
    for (const worker of liveWorkers()) worker.process.kill(name)
  }

  #exited(worker: Worker, born: number, code: number, signal: string | null): void {
    const listened = this.#serving.delete(worker)
    const reported = this.#reported.has(worker)
    const how = signal ?? (reported ? 'its error above' : `exit code ${code}`)
    if (this.#stopping) return this.#exitedWhileStopping(worker, code, signal)
    if (this.#startup)
      return this.#startup.fail(
        reported
          ? new ReportedError(`A worker stopped while starting (${how}), and said why`)
          : new FwError('FW_SERVE_WORKER', `A worker stopped while starting (${how})`, {
              hint: 'Its own error, if it printed one, is above; no worker is left running.',
            }),
      )
    if (!listened && ++this.#bootFailures >= BOOT_FAILURES_TO_GIVE_UP && this.#serving.size === 0)
      return this.#giveUp(
        new FwError(
          'FW_SERVE_WORKER',
          `${this.#bootFailures} workers in a row stopped while starting (the last: ${how}), and none is left serving`,
          { hint: 'Their own errors are above; fw serve stops rather than restart them forever.' },
        ),
      )
    this.#restartLater(born, signal ?? (reported ? 'its error above' : code))
  }

  #exitedWhileStopping(worker: Worker, code: number, signal: string | null): void {
    // Exit code 0, or the signal sent to a replacement still starting, before it listened for
    // it (SIGHUP too: a closed terminal hangs up every worker on it). A crash during the drain is
    // exit code 1; a kill was reported when it was sent.
    if (code === 0 || signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGHUP') return
    this.#stoppedWell = false
    if (!this.#killed.has(worker)) this.#warn(`worker exited (${signal ?? code}) while stopping`)
  }

  #restartLater(born: number, how: string | number): void {
    this.#quickDeaths = Date.now() - born < QUICK_DEATH_MS ? this.#quickDeaths + 1 : 0
    const delay =
      this.#quickDeaths === 0
        ? 0
        : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (this.#quickDeaths - 1))
    this.#warn(
      `worker exited (${how}); starting another${delay > 0 ? ` in ${delay / 1000} s` : ''}`,
    )
    const timer = setTimeout(() => {
      this.#restarts.delete(timer)
      if (!this.#stopping) this.#fork()
    }, delay)
    this.#restarts.add(timer)
  }

  #fork(): void {
    const born = Date.now()
    const worker = cluster.fork({ [WORKER_PORT]: String(this.#port) })
    worker.on('listening', (address: AddressInfo) => {
      // A server of the app's own (a metrics port) is not the worker serving.
      if (address.port !== this.#port) return
      this.#serving.add(worker)
      this.#bootFailures = 0
      this.#startup?.listened()
    })
    worker.on('message', (message: { tag?: unknown } | null) => {
      if (message?.tag === REPORTED) this.#reported.add(worker)
    })
    // Handled once the IPC channel is closed too: it closes after its last message is read, so
    // a worker's REPORTED is never read after its exit is handled. Node does not always say that
    // it closed (a worker killed while connections were handed to it): then DISCONNECT_WAIT_MS
    // after the exit, so that such a worker is still replaced (it never was, and a pool whose
    // last worker went so ended the primary without a word).
    let exit: [number, string | null] | null = null
    let settled = false
    const settle = (): void => {
      if (settled || exit === null) return
      settled = true
      this.#exited(worker, born, ...exit)
    }
    let disconnected = false
    worker.on('exit', (code, signal) => {
      exit = [code, signal]
      if (disconnected) return settle()
      setTimeout(settle, DISCONNECT_WAIT_MS).unref()
    })
    worker.on('disconnect', () => ((disconnected = true), settle()))
  }

  // Resolves once `n` more workers listen; rejects if one exits first.
  #listening(n: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let listened = 0
      this.#startup = {
        listened: () => void (++listened === n && ((this.#startup = null), resolve())),
        fail: (error) => ((this.#startup = null), reject(error)),
      }
    })
  }

  // A handler in an endless loop never lets its worker's stop signal listener run.
  #killStuckLater(): NodeJS.Timeout {
    return setTimeout(() => {
      const stuck = liveWorkers()
      const them = stuck.length === 1 ? 'it' : 'them'
      this.#warn(
        `${count(stuck.length, 'worker')} still running ${STOP_WAIT_MS / 1000} s after the stop: killing ${them}`,
      )
      for (const worker of stuck) (this.#killed.add(worker), worker.process.kill('SIGKILL'))
    }, STOP_WAIT_MS)
  }
}

/** SIGTERMs `worker` unless it is dead already; resolves once it has exited. */
function terminate(worker: Worker): Promise<void> {
  // Both events, as #fork handles an exit only once both came: resolved on 'exit' alone, a stop
  // could report success before a crash during the drain was counted.
  const exited = new Promise<void>((done) => {
    worker.once('exit', () => done())
    if (worker.isDead()) done()
  })
  const disconnected = new Promise<void>((done) => {
    worker.once('disconnect', () => done())
    if (!worker.isConnected()) done()
    // As #fork: a channel Node never reports closed is taken as closed soon after the exit.
    worker.once('exit', () => setTimeout(done, DISCONNECT_WAIT_MS).unref())
  })
  if (!worker.isDead()) worker.process.kill('SIGTERM')
  return Promise.all([exited, disconnected]).then(() => undefined)
}

function liveWorkers(): Worker[] {
  // A worker that has exited but whose IPC channel has not closed yet is still listed: waiting
  // for its 'exit' would wait forever.
  return Object.values(cluster.workers ?? {}).filter(
    (w): w is Worker => w !== undefined && !w.isDead(),
  )
}

/**
 * Tells every worker to load the routes again; resolves when each has answered, is gone, or has
 * not answered within RELOAD_WAIT_MS.
 */
export function reloadWorkers(warn: (line: string) => void): Promise<void> {
  const workers = liveWorkers().filter((w) => w.isConnected())
  return Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((done) => {
          const onMessage = (message: { tag?: unknown } | null): void => {
            if (message?.tag === RELOADED) finish()
          }
          const finish = (): void => {
            clearTimeout(timer)
            worker.off('message', onMessage)
            worker.off('exit', finish)
            done()
          }
          // The next rebuild waits for this reload: a worker stuck in a loop must not stop them all.
          const timer = setTimeout(() => {
            warn(
              `a worker has not loaded the new routes after ${RELOAD_WAIT_MS / 1000} s; not waiting for it`,
            )
            finish()
          }, RELOAD_WAIT_MS)
          worker.on('message', onMessage)
          worker.once('exit', finish)
          worker.send({ tag: RELOAD })
        }),
    ),
  ).then(() => undefined)
}
