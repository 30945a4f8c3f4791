/**
 * The workers of `fw serve --workers N`, as the primary runs them: forks them on one port,
 * restarts those that crash (and gives up, exit 1, once replacements keep failing to start with
 * none serving), tells them to reload the routes under --watch, and stops them on a signal
 * (killing one still running well after its drain).
 */
import cluster, { type Worker } from 'node:cluster'
import type { AddressInfo } from 'node:net'
import { count } from '../shared/count.js'
import { FwError } from '../shared/errors.js'
import { DRAIN_MS, LEFT_OPEN_MS } from './shutdown.js'

/** The port the primary tells its workers to listen on. */
export const WORKER_PORT = 'FW_SERVE_WORKER_PORT'
/** The primary's message to its workers under --watch: load the routes again. */
export const RELOAD = 'fw:reload-routes'
/** A worker's answer once it has loaded them (or failed to, and said why). */
export const RELOADED = 'fw:routes-reloaded'
/** A worker that exits sooner than this after it was forked counts as a crash loop. */
const QUICK_DEATH_MS = 10_000
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

export function forkPool(port: number, warn: (line: string) => void): Pool {
  let stopping = false
  let stoppedWell = true
  let startup: { listened(): void; fail(error: Error): void } | null = null
  // A worker that dies soon after it started will likely die again: each quick death in a row
  // doubles the wait before the next one (0.1 s up to 10 s), so a crash loop cannot eat the CPU.
  let quickDeaths = 0
  let bootFailures = 0
  const serving = new Set<Worker>()
  const killed = new WeakSet<Worker>()
  const restarts = new Set<NodeJS.Timeout>()
  let giveUp!: (error: FwError) => void
  const failed = new Promise<FwError>((resolve) => (giveUp = resolve))
  const exited = (worker: Worker, born: number, code: number, signal: string | null): void => {
    const listened = serving.delete(worker)
    const how = signal ?? `exit code ${code}`
    if (stopping) {
      // Exit code 0, or the signal sent to a replacement still starting, before it listened for
      // it. A crash during the drain is exit code 1; a kill was reported when it was sent.
      if (code === 0 || signal === 'SIGTERM' || signal === 'SIGINT') return
      stoppedWell = false
      if (!killed.has(worker)) warn(`worker exited (${signal ?? code}) while stopping`)
      return
    }
    if (startup)
      return startup.fail(
        new FwError('FW_SERVE_WORKER', `A worker stopped while starting (${how})`, {
          hint: 'Its own error, if it printed one, is above; no worker is left running.',
        }),
      )
    if (!listened && ++bootFailures >= BOOT_FAILURES_TO_GIVE_UP && serving.size === 0)
      return giveUp(
        new FwError(
          'FW_SERVE_WORKER',
          `${bootFailures} workers in a row stopped while starting (the last: ${how}), and none is left serving`,
          { hint: 'Their own errors are above; fw serve stops rather than restart them forever.' },
        ),
      )
    quickDeaths = Date.now() - born < QUICK_DEATH_MS ? quickDeaths + 1 : 0
    const delay = quickDeaths === 0 ? 0 : Math.min(10_000, 100 * 2 ** (quickDeaths - 1))
    warn(
      `worker exited (${signal ?? code}); starting another${delay > 0 ? ` in ${delay / 1000} s` : ''}`,
    )
    const timer = setTimeout(() => {
      restarts.delete(timer)
      if (!stopping) fork()
    }, delay)
    restarts.add(timer)
  }
  const fork = (): void => {
    const born = Date.now()
    const worker = cluster.fork({ [WORKER_PORT]: String(port) })
    worker.on('listening', (address: AddressInfo) => {
      // A server of the app's own (a metrics port) is not the worker serving.
      if (address.port !== port) return
      serving.add(worker)
      bootFailures = 0
      startup?.listened()
    })
    worker.on('exit', (code, signal) => exited(worker, born, code, signal))
  }
  // Resolves once `n` more workers listen; rejects if one exits first.
  const listening = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let listened = 0
      startup = {
        listened: () => void (++listened === n && ((startup = null), resolve())),
        fail: (error) => ((startup = null), reject(error)),
      }
    })
  return {
    async start(n) {
      // One worker first: a start that fails (a port in use) is then reported once, not by each.
      const first = listening(1)
      fork()
      await first
      // Ready means every worker listens: a request once the banner is out may reach any of them.
      const rest = listening(n - 1)
      for (let i = 1; i < n; i++) fork()
      await rest
    },
    failed,
    async stop() {
      stopping = true
      for (const timer of restarts) clearTimeout(timer)
      // A handler in an endless loop never lets its worker's stop signal listener run.
      const timer = setTimeout(() => {
        const stuck = liveWorkers()
        const them = stuck.length === 1 ? 'it' : 'them'
        warn(
          `${count(stuck.length, 'worker')} still running ${STOP_WAIT_MS / 1000} s after the stop: killing ${them}`,
        )
        for (const worker of stuck) (killed.add(worker), worker.process.kill('SIGKILL'))
      }, STOP_WAIT_MS)
      await Promise.all(
        liveWorkers().map(
          (w) =>
            new Promise<void>((done) => {
              w.once('exit', () => done())
              if (w.isDead()) return done()
              w.process.kill('SIGTERM')
            }),
        ),
      )
      clearTimeout(timer)
      return stoppedWell
    },
    signal(name) {
      for (const worker of liveWorkers()) worker.process.kill(name)
    },
  }
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
