/**
 * The compiler's public API (build time only: it loads esbuild and ts-morph).
 * @example
 * import { buildCache } from 'fw/compiler'
 * const result = await buildCache({ routesFile: 'routes.ts', cacheDir: '.fw/cache' })
 */
import { performance } from 'node:perf_hooks'
import { join, relative, resolve } from 'node:path'
import type { Manifest } from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import { displayPath } from '../define/location.js'
import { collectRoutes, type Registrar } from '../define/registrar.js'
import { buildRouter } from './build.js'
import { loadRoutesFile } from './load-routes.js'
import { relocatedBundle } from './import-module.js'
import { writeCache } from './write-cache.js'
import { clearCache } from './clear-cache.js'

export { buildRouter, type BuildOutput, type BuildOptions } from './build.js'
export { writeCache } from './write-cache.js'
export { readManifest } from './cache-ownership.js'
export { assertSafeDir } from './cache-guard.js'
export { clearCache } from './clear-cache.js'
export { loadRoutesFile } from './load-routes.js'
export { analyzeRoutes } from './analyze.js'

export interface BuildCacheResult {
  manifest: Manifest
  /** The routes file's default export, as loaded for this build. */
  register: (r: Registrar) => void
  written: boolean
  milliseconds: number
  /** What went wrong after the build was published (older generations left behind). */
  warning?: string
}

/** Loads, validates and compiles a routes file into a cache directory. */
export async function buildCache(options: {
  routesFile: string
  cacheDir: string
}): Promise<BuildCacheResult> {
  const started = performance.now()
  const cacheDir = resolve(options.cacheDir)
  const { registrar, register, inputs, code, file } = await loadRoutesFile(options.routesFile)
  const relativeInputs = Object.fromEntries(
    Object.entries(inputs).map(([path, hash]) => [relative(cacheDir, path), hash]),
  )
  const output = withFileLocation(file, () =>
    buildRouter(registrar.routes, {
      aliases: registrar.aliases,
      inputs: relativeInputs,
      // Every generation folder lies at the same depth: any name gives the same relative path.
      routesCode: relocatedBundle(code, file, join(cacheDir, 'generation-0')),
    }),
  )
  const { written, manifest, warning } = await writeCache(cacheDir, output)
  const milliseconds = performance.now() - started
  return { manifest, written, register, milliseconds, ...(warning ? { warning } : {}) }
}

/**
 * The spec's route cache operations, with its option names. `build({ cache, register })` compiles
 * a routes function in memory (the cache then has no routes.mjs: boot the kernel with the same
 * function), `build({ cache, routes: 'routes.ts' })` a routes file as `fw route:cache build` does;
 * `clear({ matcher: 'sharded', cache })` removes what build wrote and lists it.
 * @example
 * await routeCache.build({ cache: '.fw/cache', register: routes })
 * const kernel = await Kernel.boot({ routeCache: '.fw/cache', register: routes })
 */
export const routeCache = {
  async build(
    options:
      | { cache: string; register: (r: Registrar) => void; routes?: undefined }
      | { cache: string; routes: string; register?: undefined },
  ): Promise<BuildCacheResult> {
    const { cache, register, routes } = options
    if (typeof cache !== 'string') throw missingCache('build')
    if ((register === undefined) === (routes === undefined))
      throw new TypeError('routeCache.build() takes either a register function or a routes file')
    if (routes !== undefined) return buildCache({ routesFile: routes, cacheDir: cache })
    const started = performance.now()
    const registrar = collectRoutes(register!, { captureLocations: true })
    const output = buildRouter(registrar.routes, { aliases: registrar.aliases })
    const { written, manifest, warning } = await writeCache(resolve(cache), output)
    const milliseconds = performance.now() - started
    return { manifest, written, register: register!, milliseconds, ...(warning ? { warning } : {}) }
  },

  async clear(options: { cache: string; matcher?: 'sharded' }): Promise<string[]> {
    const { matcher } = options
    if (typeof options.cache !== 'string') throw missingCache('clear')
    if (matcher !== undefined && matcher !== 'sharded')
      throw new RangeError(`Unknown matcher ${JSON.stringify(matcher)}: the only one is 'sharded'`)
    return clearCache(options.cache)
  },
}

function missingCache(operation: string): TypeError {
  return new TypeError(
    `routeCache.${operation}() needs the cache folder: { cache: '.fw/cache', ... }`,
  )
}

/**
 * Runs `run`, giving an error about the table as a whole (an empty one), which carries no route's
 * location, the routes file's.
 * @example
 * withFileLocation(file, () => analyzeRoutes(registrar.routes, aliases))
 */
export function withFileLocation<T>(file: string, run: () => T): T {
  try {
    return run()
  } catch (error) {
    if (error instanceof FwError && !error.location) {
      throw new FwError(error.code, error.message, {
        hint: error.hint ?? '',
        location: { file: displayPath(file), line: 1, column: 1 },
      })
    }
    throw error
  }
}
