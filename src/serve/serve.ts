/**
 * `fw serve`: build the cache (unchanged builds write nothing), boot the kernel with the routes
 * as loaded for that build, listen, and optionally rebuild and swap on change (--watch) or run N
 * workers sharing the port (--workers, node:cluster; a crashed worker is restarted).
 */
import cluster, { type Worker } from 'node:cluster'
import { randomBytes } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import type { KernelOptions } from '../runtime/kernel.js'
import { Kernel } from '../runtime/kernel.js'
import { buildCache } from '../compiler/index.js'
import type { Registrar } from '../define/registrar.js'
import { configFileThatSet } from '../shared/config-markers.js'
import { count } from '../shared/count.js'
import { FwError } from '../shared/errors.js'
import { serveLogger } from './dev-logger.js'
import { listenError, startServer, type RunningServer } from './server.js'
import { watchRoutes, type RouteWatcher } from './watch-routes.js'

export interface ServeOptions {
  routes: string
  cache: string
  port: number
  host: string
  watch: boolean
  workers: number
  /** Extra kernel options (from fw.config.ts `kernel`). */
  kernel?: Partial<KernelOptions>
  say: (line: string) => void
  warn: (line: string) => void
  onError: (error: unknown) => void
}

/** The port the primary tells its workers to listen on. */
const WORKER_PORT = 'FW_SERVE_WORKER_PORT'
/** The primary's message to its workers under --watch: load the routes again. */
const RELOAD = 'fw:reload-routes'
/** A worker's answer once it has loaded them (or failed to, and said why). */
const RELOADED = 'fw:routes-reloaded'
/** A worker that exits sooner than this after it was forked counts as a crash loop. */
const QUICK_DEATH_MS = 10_000

/** Runs until SIGTERM/SIGINT; resolves after the drain. */
export async function serve(options: ServeOptions): Promise<void> {
  checkProductionSecret(options.kernel?.env)
  if (options.workers > 1 && cluster.isPrimary) return runPrimary(options)
  if (!cluster.isWorker) return serveOne(options)
  try {
    await serveOne(options)
  } catch (error) {
    // A worker that cannot start says why and goes (its IPC channel would keep it alive); the
    // primary then stops the others and exits 1.
    options.onError(error)
    process.exit(1)
  }
}

async function serveOne(options: ServeOptions): Promise<void> {
  // Workers only load the routes: the primary built the cache (the kernel checks it matches).
  const register = cluster.isWorker
    ? await loadRegister(options.routes)
    : (await buildCache({ routesFile: options.routes, cacheDir: options.cache })).register
  let kernel = await boot(options, register)
  // Without --watch nothing is bundled again: let esbuild's service process go.
  if (!options.watch) await (await import('../compiler/import-module.js')).stopBundler()
  // A worker listens on the port its primary picked (see runPrimary).
  const port =
    cluster.isWorker && process.env[WORKER_PORT] ? Number(process.env[WORKER_PORT]) : options.port
  const server = await startServer(kernel, { ...options, port })
  useServerUrl(kernel, server.url)
  const swapTo = async (register: (r: Registrar) => void): Promise<void> => {
    const next = await boot(options, register)
    kernel = useServerUrl(next, server.url)
    server.swap(next)
  }
  // With --workers, the primary watches and rebuilds; each worker only loads the new routes.
  if (options.watch && cluster.isWorker) {
    process.on('message', (message: { tag?: unknown } | null) => {
      if (message?.tag !== RELOAD) return
      loadRegister(options.routes)
        .then(swapTo)
        .catch(options.onError)
        .finally(() => process.send?.({ tag: RELOADED }))
    })
  }
  const watcher = options.watch && !cluster.isWorker ? watchAndReload(options, swapTo) : null
  // The banner once the watcher is ready: an edit made right after it is seen.
  await watcher?.ready
  if (!cluster.isWorker) {
    options.say(
      `fw serve → ${server.url}  (${count(kernel.router.routes.length, 'route')}, ${kernel.env}${options.watch ? ', watching' : ''})`,
    )
  }
  await untilSignal()
  await watcher?.close()
  await drain(server, options.warn)
  // The connections the app opened (Redis, PostgreSQL) would keep the process alive.
  await (await import('../throttle/index.js')).closeDefaultThrottle()
  await (await import('../auth/index.js')).closeDefaultAuth()
  // A worker's IPC channel to the primary would keep it alive after the drain.
  cluster.worker?.disconnect()
  // Nothing the app left open (a timer, a connection of its own) keeps a stopped server running.
  setTimeout(() => {
    options.warn('something the app opened was still open 5 s after the drain; exiting')
    process.exit(process.exitCode ?? 0)
  }, 5000).unref()
}

/**
 * Without APP_URL, absolute URLs start with the address this server answers on (the generated
 * router's default, http://localhost, has no port). A wildcard host is shown as localhost.
 */
function useServerUrl(kernel: Kernel, url: string): Kernel {
  if (!process.env.APP_URL)
    kernel.router.setBaseUrl(url.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, '//localhost'))
  return kernel
}

/**
 * --watch: rebuilds when the routes or their imports change, `reload` puts the new routes to
 * work, then one "reloaded" line; a failed rebuild keeps the running routes.
 */
function watchAndReload(
  options: ServeOptions,
  reload: (register: (r: Registrar) => void) => Promise<void>,
): RouteWatcher {
  return watchRoutes({
    routesFile: options.routes,
    cacheDir: options.cache,
    onBuild: (result, changed) => {
      if (changed.length === 0) return
      reload(result.register).then(
        () =>
          options.say(
            `reloaded ${count(result.manifest.routeCount, 'route')} (changed: ${changed.join(', ')})`,
          ),
        options.onError,
      )
    },
    onError: (error) => {
      options.onError(error)
      options.warn('keeping the running routes; waiting for changes')
    },
  })
}

async function boot(options: ServeOptions, register: (r: Registrar) => void): Promise<Kernel> {
  const env = options.kernel?.env ?? process.env.APP_ENV ?? 'development'
  const log = options.kernel?.log ?? serveLogger(env, process.stdout.isTTY === true)
  return Kernel.boot({
    ...options.kernel,
    ...(log === null ? {} : { log }),
    routeCache: options.cache,
    register,
  })
}

async function loadRegister(routesFile: string): Promise<(r: Registrar) => void> {
  const { loadRoutesFile } = await import('../compiler/load-routes.js')
  return (await loadRoutesFile(routesFile)).register
}

async function drain(server: RunningServer, warn: (line: string) => void): Promise<void> {
  // Idle connections are closed as they turn idle (server.close): what is left is still working.
  const timer = setTimeout(() => {
    warn('cut off the in-flight requests still running 10 s after the stop signal')
    server.server.closeAllConnections()
  }, 10_000)
  timer.unref()
  await server.close()
  clearTimeout(timer)
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => resolve()
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}

/**
 * The primary builds once, then forks workers and restarts those that crash. With --watch it
 * rebuilds on change and tells every worker to load the new routes (one build, one cache
 * writer, one "reloaded" line).
 */
async function runPrimary(options: ServeOptions): Promise<void> {
  await buildCache({ routesFile: options.routes, cacheDir: options.cache })
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
  let stopping = false
  // Every worker listens on one concrete port, picked here for --port 0: were every worker gone
  // at one moment, a replacement's listen(0) would get another random port.
  const port = options.port === 0 ? await freePort(options.host) : options.port
  let startup: Startup | null = null
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
      options.warn(
        `worker exited (${signal ?? code}); starting another${delay > 0 ? ` in ${delay / 1000} s` : ''}`,
      )
      const timer = setTimeout(() => {
        restarts.delete(timer)
        if (!stopping) fork()
      }, delay)
      restarts.add(timer)
    })
  }
  // Resolves once `count` more workers listen; rejects if one exits first.
  const listening = (count: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let listened = 0
      const onListening = (): void => {
        if (++listened < count) return
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
  try {
    // One worker first: a start that fails (a port in use) is then reported once, not by each.
    const first = listening(1)
    fork()
    await first
    // Ready means every worker listens: a request once the banner is out may reach any of them.
    const rest = listening(options.workers - 1)
    for (let i = 1; i < options.workers; i++) fork()
    await rest
  } catch (error) {
    stopping = true
    await stopWorkers()
    throw error
  }
  // Every worker swaps before "reloaded" is said: a request sent after it gets the new routes.
  const watcher = options.watch ? watchAndReload(options, reloadWorkers) : null
  await watcher?.ready
  options.say(
    `fw serve → http://${options.host}:${port}  (${options.workers} workers${options.watch ? ', watching' : ''})`,
  )
  await untilSignal()
  await watcher?.close()
  stopping = true
  for (const timer of restarts) clearTimeout(timer)
  await stopWorkers()
}

/** Tells every worker to load the routes again; resolves when each has answered or is gone. */
function reloadWorkers(): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter(
    (w): w is Worker => w !== undefined && w.isConnected(),
  )
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

interface Startup {
  fail(error: Error): void
}

/** SIGTERM to every worker still alive; resolves once they have exited. */
async function stopWorkers(): Promise<void> {
  // A worker that has exited but whose IPC channel has not closed yet is still listed: waiting
  // for its 'exit' would wait forever.
  const workers = Object.values(cluster.workers ?? {}).filter(
    (w): w is Worker => w !== undefined && !w.isDead(),
  )
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((done) => {
          w.once('exit', () => done())
          if (w.isDead()) return done()
          w.process.kill('SIGTERM')
        }),
    ),
  )
}

/** DESIGN.md: in production (APP_ENV, or the kernel's env option), no start without a JWT_SECRET of at least 32 bytes. */
function checkProductionSecret(kernelEnv: KernelOptions['env']): void {
  if ((kernelEnv ?? process.env.APP_ENV) !== 'production') return
  const secret = process.env.JWT_SECRET ?? ''
  if (Buffer.byteLength(secret) < 32) {
    // A value from the config file wins over the environment: then the fix is in that file.
    const configFile = configFileThatSet('JWT_SECRET')
    const size =
      secret === '' ? (configFile ? 'empty' : 'not set') : `only ${Buffer.byteLength(secret)} bytes`
    throw new FwError(
      'FW_SERVE_CONFIG',
      `JWT_SECRET ${configFile ? `from ${configFile} ` : ''}is ${size}; production needs at least 32 bytes`,
      {
        hint: configFile
          ? `Change JWT_SECRET in ${configFile} (it wins over the environment) to 32 or more random bytes, e.g. from \`openssl rand -hex 32\`.`
          : 'Set JWT_SECRET to 32 or more random bytes, e.g. JWT_SECRET=$(openssl rand -hex 32).',
      },
    )
  }
}
