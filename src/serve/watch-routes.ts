/**
 * Rebuilds the route cache when the routes file or anything it imports changes. One build runs
 * at a time; events that arrive meanwhile are coalesced into one more build. A failed rebuild
 * leaves the last good cache in place (writeCache publishes only complete builds).
 */
import { watch, type FSWatcher } from 'chokidar'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { BuildCacheResult } from '../compiler/index.js'

export interface WatchOptions {
  routesFile: string
  cacheDir: string
  /**
   * Called after every successful build (the first one included). The next build waits for the
   * promise it returns: a reload that finishes after a newer one would swap in older routes.
   */
  onBuild: (result: BuildCacheResult, changed: string[]) => void | Promise<void>
  /** Called when a build fails; the previous cache stays in use. */
  onError: (error: unknown, changed: string[]) => void
}

export interface RouteWatcher {
  /** Resolves after the first build attempt (successful or not), once the files are watched. */
  ready: Promise<void>
  close(): Promise<void>
}

// What an import can name (esbuild's resolve extensions and JSON), and fw's own temporary bundles.
const SOURCE = /\.(?:[cm]?[jt]sx?|json)$/
const TEMP = /\.fw-\d+-[0-9a-f]+\.mjs$/

/** The tsconfig.json of `folder` or the closest folder above it, or null. */
function nearestTsconfig(folder: string): string | null {
  for (let at = folder; ; at = dirname(at)) {
    const file = join(at, 'tsconfig.json')
    if (existsSync(file)) return file
    if (dirname(at) === at) return null
  }
}

function foldersOf(files: Set<string>): Set<string> {
  return new Set([...files].map((file) => dirname(file)))
}

/**
 * Starts watching.
 * @example
 * const watcher = watchRoutes({ routesFile: 'routes.ts', cacheDir: '.fw/cache', onBuild, onError })
 */
export function watchRoutes(options: WatchOptions): RouteWatcher {
  const routesFile = resolve(options.routesFile)
  // Made after the first build, on every file it read: chokidar's 'ready' then covers them all.
  // Files added to a watcher later are watched some time after add() returns, with no event to
  // say when, so an edit made just after the banner (which waits for `ready`) could be missed.
  let watcher: FSWatcher | null = null
  let running: Promise<void> | null = null
  let pending = new Set<string>()
  // The tsconfig.json esbuild reads (its `paths` resolve imports) is no input of the build.
  const config = nearestTsconfig(dirname(routesFile))
  const always = config === null ? [routesFile] : [routesFile, config]
  let watched = new Set(always)
  let failed = false
  // The folders of the files are watched, not the files: chokidar loses a file that is deleted
  // and created again (git checkout, editors' safe writes) when a parent folder is watched too.
  let folders = foldersOf(watched)

  const runBuild = async (changed: string[]): Promise<void> => {
    const { buildCache } = await import('../compiler/index.js')
    try {
      const result = await buildCache({ routesFile, cacheDir: options.cacheDir })
      const inputs = Object.keys(result.manifest.inputs).map((file) =>
        resolve(options.cacheDir, file),
      )
      watched = new Set([...always, ...inputs])
      const next = foldersOf(watched)
      watcher?.unwatch([...folders].filter((f) => !next.has(f)))
      watcher?.add([...next].filter((f) => !folders.has(f)))
      folders = next
      failed = false
      await options.onBuild(result, changed)
    } catch (error) {
      failed = true
      options.onError(error, changed)
    }
  }

  const schedule = (event: string, file: string): void => {
    // A new source file beside the others may be the import a failed build could not resolve.
    const relevant =
      watched.has(file) || (failed && event === 'add' && SOURCE.test(file) && !TEMP.test(file))
    if (!relevant || !['add', 'change', 'unlink'].includes(event)) return
    pending.add(file)
    if (running) return
    running = (async () => {
      while (pending.size > 0) {
        const changed = [...pending]
        pending = new Set()
        await runBuild(changed)
      }
      running = null
    })()
  }

  const ready = runBuild([]).then(() => {
    const started = watch([...folders], {
      ignoreInitial: true,
      depth: 0,
      awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
    })
    watcher = started
    started.on('all', schedule)
    return new Promise<void>((resolve) => started.once('ready', () => resolve()))
  })
  return {
    ready,
    async close() {
      await ready
      await watcher?.close()
      await running
    },
  }
}
