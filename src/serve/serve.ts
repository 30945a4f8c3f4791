/**
 * `fw serve`: build the cache (unchanged builds write nothing), boot the kernel with the routes
 * as loaded for that build, listen, and optionally rebuild and swap on change (--watch) or run N
 * workers sharing the port (--workers, node:cluster, see workers.ts).
 */
import cluster from 'node:cluster'
import type { KernelOptions } from '../runtime/kernel.js'
import { Kernel } from '../runtime/kernel.js'
import type { Registrar } from '../define/registrar.js'
import { configFileThatSet, configVariableLocation } from '../shared/config-markers.js'
import { count } from '../shared/count.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { CRASH_DRAIN_MS, listenForCrash } from './crash.js'
import { appLogging } from './dev-logger.js'
import { startServer } from './server.js'
import { drain, exitIfLeftOpen, listenForStop } from './shutdown.js'
import { firstBuild } from './first-build.js'
import { watchAndReload } from './watch-and-reload.js'
import {
  loadWorkerRoutes,
  RELOAD,
  RELOADED,
  REPORTED,
  runPrimary,
  stoppingLine,
  WORKER_PORT,
} from './workers.js'
import { isProduction } from '../shared/app-env.js'
import { thrownMessage } from '../shared/thrown.js'

export interface ServeOptions {
  routes: string
  cache: string
  port: number
  host: string
  watch: boolean
  workers: number
  /**
   * --access-log / --no-access-log; unset, the config's `kernel.accessLog`, else off (extra lines
   * on a terminal or in a log collector are asked for, never imposed).
   */
  accessLog?: boolean | undefined
  /** Extra kernel options (from fw.config.ts `kernel`). */
  kernel?: Partial<KernelOptions>
  /** Where those are written (the config file's `kernel` key): boot errors about them name it. */
  kernelSource?: SourceLocation | undefined
  say: (line: string) => void
  warn: (line: string) => void
  onError: (error: unknown) => void
}

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
    await reportToPrimary()
    process.exit(1)
  }
}

/** Tells the primary this worker printed its error, once stderr has it (a pipe may lag). */
function reportToPrimary(): Promise<void> {
  return new Promise((done) =>
    process.stderr.write('', () =>
      process.send ? void process.send({ tag: REPORTED }, () => done()) : done(),
    ),
  )
}

async function serveOne(options: ServeOptions): Promise<void> {
  // A worker hears of reloads from its start: one asked for while it boots (it replaces a crashed
  // worker as an edit is built) was lost, and it served the routes it started with for good,
  // beside workers serving the new ones. It is done once the worker serves.
  let reloadAsked = false
  let onReload = (): void => void (reloadAsked = true)
  if (options.watch && cluster.isWorker) {
    process.on('message', (message: { tag?: unknown } | null) => {
      if (message?.tag === RELOAD) onReload()
    })
  }
  // Workers take the routes the primary built (see loadWorkerRoutes): no compiler loaded.
  const built = cluster.isWorker ? null : await firstBuild(options)
  let kernel = built === null ? await bootWorker(options) : await boot(options, built.register)
  // Without --watch nothing is bundled again: let esbuild's service process go.
  if (!options.watch && !cluster.isWorker)
    await (await import('../compiler/import-module.js')).stopBundler()
  // A worker listens on the port its primary picked (see runPrimary).
  const port =
    cluster.isWorker && process.env[WORKER_PORT] ? Number(process.env[WORKER_PORT]) : options.port
  const server = await startServer(kernel, { ...options, port })
  // From here an error the app leaves uncaught is logged by the app's logger, then ends the
  // process after a short drain (crash.ts), instead of Node's raw crash.
  const crash = listenForCrash(() => kernel.log, { keepRunning: options.watch })
  useServerUrl(kernel, server.url)
  const swapTo = async (register: (r: Registrar) => void): Promise<void> => {
    const next = await boot(options, register)
    kernel = useServerUrl(next, server.url)
    server.swap(next)
  }
  // With --workers, the primary watches and rebuilds; each worker only loads the new routes.
  onReload = () =>
    void loadWorkerRoutes(options)
      .then(swapTo)
      .catch(options.onError)
      .finally(() => process.send?.({ tag: RELOADED }))
  if (reloadAsked) onReload()
  const watcher =
    options.watch && built !== null ? watchAndReload(options, swapTo, built.manifest) : null
  // The banner once the watcher is ready: an edit made right after it is seen.
  await watcher?.ready
  if (!cluster.isWorker) {
    options.say(
      `fw serve → ${server.url}  (${count(kernel.router.routes.length, 'route')}, ${kernel.env}${options.watch ? ', watching' : ''})`,
    )
  }
  const stop = listenForStop()
  const signal = await Promise.race([stop.received, crash.received.then(() => null)])
  if (signal === null) {
    // Logged by listenForCrash; a supervisor (or the --workers primary) starts a fresh process.
    await watcher?.close()
    await drain(server, stop, options.warn, { ms: CRASH_DRAIN_MS, after: 'the crash' })
    process.exit(1)
  }
  // The primary speaks for its workers.
  if (!cluster.isWorker) options.warn(stoppingLine(signal))
  await watcher?.close()
  // A stop whose deadline cut requests off still exits 0 (the warning line says so): a supervisor
  // marks a stop that exits 1 as failed, and the drain did what it promises.
  await drain(server, stop, options.warn)
  stop.dispose()
  // Counted from here, closing what the app opened included: a query a cut-off request left
  // running (up to its statement timeout) held the pool's close, and the stop, for 15 s more.
  exitIfLeftOpen('the drain', options.warn)
  // The connections the app opened (Redis, PostgreSQL) would keep the process alive.
  await (await import('../throttle/index.js')).closeDefaultThrottle()
  await (await import('../auth/index.js')).closeDefaultAuth()
  // A worker's IPC channel to the primary would keep it alive after the drain.
  cluster.worker?.disconnect()
}

/**
 * A worker's kernel, on the routes of the cache the primary built. A build the primary publishes
 * between the worker's load of the routes and the kernel's read of the cache (a worker replacing
 * a crashed one as an edit is built) failed its start with FW_CACHE_STALE: the routes are then
 * loaded again, from the new build.
 */
async function bootWorker(options: ServeOptions): Promise<Kernel> {
  for (let tries = 1; ; tries++) {
    const register = await loadWorkerRoutes(options)
    try {
      return await boot(options, register)
    } catch (error) {
      if (tries === 3 || !(error instanceof FwError) || error.code !== 'FW_CACHE_STALE') throw error
    }
  }
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

async function boot(options: ServeOptions, register: (r: Registrar) => void): Promise<Kernel> {
  const { log } = appLogging(options.kernel)
  try {
    return await Kernel.boot({
      ...options.kernel,
      accessLog: options.accessLog ?? options.kernel?.accessLog ?? false,
      ...(log === null ? {} : { log }),
      routeCache: options.cache,
      register,
    })
  } catch (error) {
    throw inKernelSource(error, options)
  }
}

// The boot errors with no place of their own that the kernel options cause: FW_SERVE_CONFIG, and
// middleware that cannot be built (a global list's `throttle:0,60`, an alias without its factory).
const KERNEL_CODES: readonly string[] = ['FW_SERVE_CONFIG', 'FW_MIDDLEWARE_INVALID']

/**
 * A boot error about the kernel options (an unknown matcher, a log option without error(), a
 * service provider that is none or fails, a malformed global middleware) names where they are
 * written, the config file's `kernel` key, as the CLI does for every user error. Those are the
 * KERNEL_CODES errors with no place of their own (the JWT_SECRET ones are checked before boot, by checkProductionSecret),
 * and other errors whose message starts with the name of an option given there
 * (`errorRendererTimeoutMs must be …`).
 */
function inKernelSource(error: unknown, options: ServeOptions): unknown {
  const where = options.kernelSource
  if (where === undefined || !(error instanceof Error)) return error
  const about =
    error instanceof FwError
      ? KERNEL_CODES.includes(error.code) && error.location === undefined
      : Object.keys(options.kernel ?? {}).some((key) => thrownMessage(error).startsWith(`${key} `))
  if (!about) return error
  const hint = `Fix kernel in ${where.file} (run with --debug for the stack).`
  if (!(error instanceof FwError))
    return new FwError('FW_SERVE_CONFIG', thrownMessage(error), {
      hint,
      location: where,
      cause: error,
    })
  // The same error, placed: its stack and cause (a provider's own error) stay what --debug shows.
  const placed = new FwError(error.code, error.message, {
    hint: error.hint ?? hint,
    location: where,
    cause: error.cause,
  })
  placed.stack = error.stack
  return placed
}

/** DESIGN.md: in production (APP_ENV, or the kernel's env option), no start without a JWT_SECRET of at least 32 bytes. */
function checkProductionSecret(kernelEnv: KernelOptions['env']): void {
  if (!isProduction(kernelEnv ?? process.env.APP_ENV)) return
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
        location: configVariableLocation('JWT_SECRET'),
        hint: configFile
          ? `Change JWT_SECRET in ${configFile} (it wins over the environment) to 32 or more random bytes, e.g. from \`openssl rand -hex 32\`.`
          : 'Set JWT_SECRET to 32 or more random bytes, e.g. JWT_SECRET=$(openssl rand -hex 32).',
      },
    )
  }
}
