/**
 * `fw serve --workers N`: the primary builds (and with --watch rebuilds), runs N workers that
 * share one port through node:cluster (worker-pool.ts), and stops them on a signal. Workers take
 * their routes from the cache the primary built, not from the routes file.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { displayPath } from '../define/location.js'
import type { Registrar } from '../define/registrar.js'
import { MANIFEST_FILE, ROUTES_ENTRY_FILE, type Manifest } from '../shared/cache-format.js'
import { count } from '../shared/count.js'
import { FwError } from '../shared/errors.js'
import type { Logger } from '../runtime/types.js'
import { listenForCrash } from './crash.js'
import { appEnv, appLogging } from './dev-logger.js'
import { listenError } from './server.js'
import { DRAIN_MS, exitIfLeftOpen, listenForStop, type StopSignal } from './shutdown.js'
import type { ServeOptions } from './serve.js'
import { firstBuild } from './first-build.js'
import { watchAndReload } from './watch-and-reload.js'
import type { RouteWatcher } from './watch-routes.js'
import { forkPool, reloadWorkers, type Pool } from './worker-pool.js'
import { thrownMessage } from '../shared/thrown.js'

export { RELOAD, RELOADED, REPORTED, WORKER_PORT } from './worker-pool.js'

type Register = (r: Registrar) => void

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
    let module: { default?: unknown } | undefined
    // The bundle's inline source map: a worker's stacks name the app's files and lines, as the
    // primary's (import-module.ts) and a single process's do, not lines of routes.mjs.
    process.setSourceMapsEnabled(true)
    try {
      module = (await import(pathToFileURL(file).href)) as { default?: unknown }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND')
        throw threwInWorker(options.routes, error, 'loaded')
    }
    if (typeof module?.default === 'function')
      return runInWorker(options.routes, module.default as Register)
  }
  const { loadRoutesFile } = await import('../compiler/load-routes.js')
  const { register } = await loadRoutesFile(options.routes)
  // esbuild's service process would keep the worker alive after its drain.
  await (await import('../compiler/import-module.js')).stopBundler()
  return register
}

/** The routes function, its own errors told as the routes file's (not as a bug in fw). */
function runInWorker(routes: string, register: Register): Register {
  return (r) => {
    try {
      return register(r)
    } catch (error) {
      throw error instanceof FwError ? error : threwInWorker(routes, error, 'run')
    }
  }
}

/** The primary's build ran the routes file without this error: the worker's own run threw it. */
function threwInWorker(routes: string, error: unknown, phase: 'loaded' | 'run'): FwError {
  const message = thrownMessage(error)
  return new FwError(
    'FW_ROUTES_LOAD',
    `${displayPath(routes)} threw while a worker ${phase === 'loaded' ? 'loaded' : 'ran'} it: ${message}`,
    {
      hint: 'Fix the error in your routes file or what it imports (run with --debug for the stack).',
      cause: error,
    },
  )
}

/**
 * The primary builds once, then forks workers and restarts those that crash. With --watch it
 * rebuilds on change and tells every worker to load the new routes (one build, one cache
 * writer, one "reloaded" line).
 */
export async function runPrimary(options: ServeOptions): Promise<void> {
  const manifest = await buildOnce(options)
  await shareStateAcrossWorkers(options)
  // Every worker listens on one concrete port, picked here for --port 0: were every worker gone
  // at one moment, a replacement's listen(0) would get another random port.
  const port = options.port === 0 ? await freePort(options.host) : options.port
  const pool = await startPool(port, options)
  // Every worker swaps before "reloaded" is said: a request sent after it gets the new routes.
  const watcher = options.watch
    ? watchAndReload(options, () => reloadWorkers(options.warn), manifest)
    : null
  await watcher?.ready
  options.say(bannerLine(options, port, manifest))
  const stop = listenForStop()
  // The primary ran the routes and config files too: what they leave uncaught ends it as it ends
  // a worker (crash.ts), its workers stopped first; under --watch it keeps running, as they do.
  const crash = listenForCrash(await primaryLogger(options), { keepRunning: options.watch })
  const outcome = await Promise.race([stop.received, crash.received.then(() => null), pool.failed])
  await stopPrimary(outcome, { options, stop, watcher, pool })
}

/** The primary's build, the one its workers take their routes from. */
async function buildOnce(options: ServeOptions): Promise<Manifest> {
  const { manifest } = await firstBuild(options)
  if (!options.watch) await (await import('../compiler/import-module.js')).stopBundler()
  return manifest
}

/** What every worker must see alike: the throttle counters, the revoked tokens, the secret. */
async function shareStateAcrossWorkers(options: ServeOptions): Promise<void> {
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
}

/** The pool, once all its workers listen; stopped again when one fails to start. */
async function startPool(port: number, options: ServeOptions): Promise<Pool> {
  const pool = forkPool(port, options.warn)
  try {
    await pool.start(options.workers)
  } catch (error) {
    await pool.stop()
    throw error
  }
  return pool
}

/** What the primary says once every worker listens. */
function bannerLine(options: ServeOptions, port: number, manifest: Manifest): string {
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host
  const env = appEnv(options.kernel)
  return `fw serve → http://${shownHost}:${port}  (${count(manifest.routeCount, 'route')}, ${env}, ${options.workers} workers${options.watch ? ', watching' : ''})`
}

/**
 * Stops the watcher and the workers, then ends the primary as `outcome` says: exit 1 after an
 * uncaught error (null), the pool's error thrown once workers kept failing to start.
 */
async function stopPrimary(
  outcome: NodeJS.Signals | FwError | null,
  running: { options: ServeOptions; stop: StopSignal; watcher: RouteWatcher | null; pool: Pool },
): Promise<void> {
  const { options, stop, watcher, pool } = running
  if (outcome === null) {
    await watcher?.close()
    await pool.stop()
    process.exit(1)
  }
  if (typeof outcome === 'string') {
    options.warn(stoppingLine(outcome))
    // Ctrl-C twice where only the primary got the first (kill -INT): the workers cut off too.
    stop.onInterruptAgain(() => pool.signal('SIGINT'))
  }
  await watcher?.close()
  // A worker that crashed during its drain, or had to be killed, fails the stop as it fails a
  // single process (crash.ts): exit 1, not 0.
  if (!(await pool.stop())) process.exitCode = 1
  stop.dispose()
  // The primary ran the routes file (and the config file) too: a timer or connection they opened
  // would keep it running, its workers gone, until killed.
  exitIfLeftOpen('the workers stopped', options.warn)
  if (typeof outcome !== 'string') throw outcome
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
  return `stopping: finishing in-flight requests (up to ${DRAIN_MS / 1000} s${again})`
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
