/**
 * The build `fw serve` starts from. Under --watch a routes file that does not build yet (a typo,
 * a missing import, a duplicate name) does not end the server before it started: the error is
 * printed, and the server starts with the first change that builds, as it reloads on later ones.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { BuildCacheResult } from '../compiler/index.js'
import { isCacheFresh } from '../runtime/load-router.js'
import { MANIFEST_FILE, type Manifest } from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import type { ServeOptions } from './serve.js'
import { listenForStop } from './shutdown.js'
import { watchRoutes } from './watch-routes.js'

// Errors no edit of the routes file or its imports fixes: the cache folder fw may not or cannot
// write, a temp file it could not write, a --routes that names no readable file (a typo in the
// flag, more likely than a file still to be written). Waiting for a change would hide them.
const NOT_IN_THE_ROUTES = /^FW_(?:CACHE_|TEMP_|ROUTES_NOT_FOUND$|ROUTES_READ$)/
const WAITING = 'not serving yet: waiting for a change that builds'

/** Whether a change of the routes file or its imports may make `error` go away. */
function fixableByEdit(error: unknown): boolean {
  return error instanceof FwError && !NOT_IN_THE_ROUTES.test(error.code)
}

/**
 * Builds the cache once; with --watch, a build that fails on the routes is printed and retried on
 * every change until one succeeds.
 * @example
 * const { register } = await firstBuild(options)
 */
export async function firstBuild(options: ServeOptions): Promise<BuildCacheResult> {
  const { buildCache } = await import('../compiler/index.js')
  try {
    return warned(
      options,
      await buildCache({ routesFile: options.routes, cacheDir: options.cache }),
    )
  } catch (error) {
    const cached = options.watch ? null : await fromFreshCache(options, error)
    if (cached !== null) return cached
    if (!options.watch || !fixableByEdit(error)) throw error
    options.onError(error)
  }
  return untilItBuilds(options)
}

/**
 * An app deployed read-only (its folder and node_modules another user's, or a read-only image)
 * with its cache built beforehand: fw cannot write the temporary bundle it loads routes.ts from,
 * but the cache is up to date with every source file, so its routes.mjs is served, as the
 * --workers do. Null when the build failed otherwise or the cache is not up to date.
 */
async function fromFreshCache(
  options: ServeOptions,
  error: unknown,
): Promise<BuildCacheResult | null> {
  if (!(error instanceof FwError) || error.code !== 'FW_TEMP_WRITE') return null
  if (!isCacheFresh(options.cache)) return null
  const { loadWorkerRoutes } = await import('./workers.js')
  const register = await loadWorkerRoutes(options)
  const manifest = JSON.parse(
    readFileSync(join(resolve(options.cache), MANIFEST_FILE), 'utf8'),
  ) as Manifest
  options.warn(`warning ${error.message}: serving the up-to-date route cache as it was built`)
  return { manifest, register, written: false, milliseconds: 0 }
}

function untilItBuilds(options: ServeOptions): Promise<BuildCacheResult> {
  // Stopped while waiting (Ctrl-C, SIGTERM), with nothing to drain: it ends as a stop does, 0,
  // at once (closing the watcher would wait for a build in progress, which may never end).
  const stop = listenForStop()
  void stop.received.then(() => process.exit(0))
  return new Promise<BuildCacheResult>((resolve, reject) => {
    let built = false
    let watching = false
    const watcher = watchRoutes({
      routesFile: options.routes,
      cacheDir: options.cache,
      // The watcher's own first build repeats the one that failed: an edit made since is built.
      onBuild: (result) => {
        built = true
        watcher.close().then(() => resolve(warned(options, result)), reject)
      },
      onError: (error) => {
        if (!fixableByEdit(error)) return void watcher.close().then(() => reject(error), reject)
        // The first build's failure is the one printed already.
        if (!watching) return
        options.onError(error)
        options.warn(WAITING)
      },
    })
    // Said once the files are watched, so that an edit made after it is seen.
    void watcher.ready.then(() => {
      watching = true
      if (!built) options.warn(WAITING)
    }, reject)
  }).finally(() => stop.dispose())
}

/** `result`, its warning (older generations left behind) said first. */
export function warned(options: ServeOptions, result: BuildCacheResult): BuildCacheResult {
  if (result.warning !== undefined) options.warn(`warning ${result.warning}`)
  return result
}
