/**
 * `fw serve --workers N`: the primary builds (and with --watch rebuilds), forks N workers that
 * share one port through node:cluster, restarts those that crash, and stops them on a signal.
 * Workers take their routes from the cache the primary built, not from the routes file.
 */
import cluster, { type Worker } from 'node:cluster'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Registrar } from '../define/registrar.js'
import { MANIFEST_FILE, ROUTES_ENTRY_FILE, type Manifest } from '../shared/cache-format.js'
import { count } from '../shared/count.js'
import { FwError } from '../shared/errors.js'
import type { Logger } from '../runtime/types.js'
import { listenForCrash } from './crash.js'
import { appEnv, appLogging } from './dev-logger.js'
import { listenError } from './server.js'
import { exitIfLeftOpen, listenForStop } from './shutdown.js'
import type { ServeOptions } from './serve.js'
import { watchAndReload } from './watch-and-reload.js'

type Register = (r: Registrar) => void

/** The port the primary tells its workers to listen on. */
export const WORKER_PORT = 'FW_SERVE_WORKER_PORT'
/** The primary's message to its workers under --watch: load the routes again. */
export const RELOAD = 'fw:reload-routes'
/** A worker's answer once it has loaded them (or failed to, and said why). */
export const RELOADED = 'fw:routes-reloaded'
/** A worker that exits sooner than this after it was forked counts as a crash loop. */
const QUICK_DEATH_MS = 10_000

/**
 * A worker's routes: the routes file as the primary bundled it for the build the manifest names
 * (`<generation>/routes.mjs`). So a worker runs no bundler, and its routes always match the
 * cache: one that replaces a crashed worker after an edit broke the routes file starts with the
 * last good routes, as the others serve them, instead of failing on the broken file. The routes
 * file itself is bundled only when the cache has no such module, or when its package imports do
 * not resolve from the cache folder (a --cache outside the project's folder).
 */
export async function loadWorkerRoutes(options: {
  routes: string
  cache: string
}): Promise<Register> {
  const root = resolve(options.cache)
  let generation: string | undefined
  try {
    generation = (JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8')) as Manifest)
      .generation
  } catch {
    // No readable manifest: the kernel's boot says so with the command that fixes it.
  }
  const file = generation === undefined ? '' : join(root, generation, ROUTES_ENTRY_FILE)
  if (file !== '' && existsSync(file)) {
    try {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown }
      if (typeof module.default === 'function') return module.default as Register
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error
    }
  }
  const { loadRoutesFile } = await import('../compiler/load-routes.js')
  const { register } = await loadRoutesFile(options.routes)
  // esbuild's service process would keep the worker alive after its drain.
  await (await import('../compiler/import-module.js')).stopBundler()
  return register
}

/**
 * The primary builds once, then forks workers and restarts those that crash. With --watch it
 * rebuilds on change and tells every worker to load the new routes (one build, one cache
 * writer, one "reloaded" line).
 */
export async function runPrimary(options: ServeOptions): Promise<void> {
  const { buildCache } = await import('../compiler/index.js')
  const { manifest } = await buildCache({ routesFile: options.routes, cacheDir: options.cache })
  if (!options.watch) await (await import('../compiler/import-module.js')).stopBundler()
  // Without Redis, the primary keeps the throttle counters and the revocation list, so that a
  // limit and a logout hold across workers.
  if (!process.env.REDIS_URL) {
    const { setupThrottlePrimary } = await import('../throttle/index.js')
    const { setupRevocationPrimary } = await import('../auth/cluster-revocation.js')
    setupThrottlePrimary()
    setupRevocationPrimary()
  }
  // Tokens and signed URLs must verify on whichever worker gets the next request: in development
  // without JWT_SECRET the workers share one random secret (URL signing falls back to it) rather
  // than each making its own. Production refuses to start without one (checkProductionSecret).
  if (!process.env.JWT_SECRET) {
    process.env.JWT_SECRET = randomBytes(32).toString('hex')
    options.warn(
      'JWT_SECRET is not set: the workers share a random one, so tokens stop verifying after a restart',
    )
  }
  // Every worker listens on one concrete port, picked here for --port 0: were every worker gone
  // at one moment, a replacement's listen(0) would get another random port.
  const port = options.port === 0 ? await freePort(options.host) : options.port
  const pool = forkPool(port, options.warn)
  try {
    await pool.start(options.workers)
  } catch (error) {
    await pool.stop()
    throw error
  }
  // Every worker swaps before "reloaded" is said: a request sent after it gets the new routes.
  const watcher = options.watch ? watchAndReload(options, reloadWorkers) : null
  await watcher?.ready
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host
  const env = appEnv(options.kernel)
  options.say(
    `fw serve → http://${shownHost}:${port}  (${count(manifest.routeCount, 'route')}, ${env}, ${options.workers} workers${options.watch ? ', watching' : ''})`,
  )
  const stop = listenForStop()
  // The primary ran the routes and config files too: what they leave uncaught ends it as it ends
  // a worker (crash.ts), its workers stopped first.
  const crash = listenForCrash(await primaryLogger(options))
  const signal = await Promise.race([stop.received, crash.received.then(() => null)])
  if (signal === null) {
    await watcher?.close()
    await pool.stop()
    process.exit(1)
  }
  options.warn(stoppingLine(signal))
  // Ctrl-C twice where only the primary got the first (kill -INT): the workers cut off too.
  stop.onInterruptAgain(() => pool.signal('SIGINT'))
  await watcher?.close()
  await pool.stop()
  stop.dispose()
  // The primary ran the routes file (and the config file) too: a timer or connection they opened
  // would keep it running, its workers gone, until killed.
  exitIfLeftOpen('the workers stopped', options.warn)
}

/** The logger the workers' kernels get (serve.ts), for the primary's own errors. */
async function primaryLogger(options: ServeOptions): Promise<() => Logger> {
  const { createLogger, guardLogger } = await import('../runtime/logger.js')
  const { env, log } = appLogging(options.kernel)
  const guarded = guardLogger(log ?? createLogger(env))
  return () => guarded
}

/** What the first stop signal prints. */
export function stoppingLine(signal: NodeJS.Signals): string {
  const again = signal === 'SIGINT' ? '; Ctrl-C again to cut them off' : ''
  return `stopping: finishing in-flight requests (up to 10 s${again})`
}

interface Pool {
  /** Forks `n` workers; resolves once all listen, rejects when one exits first. */
  start(n: number): Promise<void>
  /** Stops restarting, SIGTERMs every worker still alive and resolves once they have exited. */
  stop(): Promise<void>
  signal(name: NodeJS.Signals): void
}

function forkPool(port: number, warn: (line: string) => void): Pool {
  let stopping = false
  let startup: { fail(error: Error): void } | null = null
  // A worker that dies soon after it started will likely die again: each quick death in a row
  // doubles the wait before the next one (0.1 s up to 10 s), so a crash loop cannot eat the CPU.
  let quickDeaths = 0
  const restarts = new Set<NodeJS.Timeout>()
  const fork = (): void => {
    const born = Date.now()
    cluster.fork({ [WORKER_PORT]: String(port) }).on('exit', (code, signal) => {
      if (stopping) return
      const how = signal ?? `exit code ${code}`
      if (startup)
        return startup.fail(
          new FwError('FW_SERVE_WORKER', `A worker stopped while starting (${how})`, {
            hint: 'Its own error, if it printed one, is above; no worker is left running.',
          }),
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
    })
  }
  // Resolves once `n` more workers listen; rejects if one exits first.
  const listening = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let listened = 0
      const onListening = (): void => {
        if (++listened < n) return
        done()
        resolve()
      }
      const done = (): void => {
        cluster.off('listening', onListening)
        startup = null
      }
      cluster.on('listening', onListening)
      startup = { fail: (error) => (done(), reject(error)) }
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
    async stop() {
      stopping = true
      for (const timer of restarts) clearTimeout(timer)
      await stopWorkers()
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

/** Tells every worker to load the routes again; resolves when each has answered or is gone. */
function reloadWorkers(): Promise<void> {
  const workers = liveWorkers().filter((w) => w.isConnected())
  return Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((done) => {
          const onMessage = (message: { tag?: unknown } | null): void => {
            if (message?.tag === RELOADED) finish()
          }
          const finish = (): void => {
            worker.off('message', onMessage)
            worker.off('exit', finish)
            done()
          }
          worker.on('message', onMessage)
          worker.once('exit', finish)
          worker.send({ tag: RELOAD })
        }),
    ),
  ).then(() => undefined)
}

/** A port that is free on `host` now (the system's pick for port 0). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(listenError(error, { port: 0, host })),
    )
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** SIGTERM to every worker still alive; resolves once they have exited. */
async function stopWorkers(): Promise<void> {
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
}
