/**
 * Rebuilds the route cache when the routes file or anything it imports changes. One build runs
 * at a time; events that arrive meanwhile are coalesced into one more build. A failed rebuild
 * leaves the last good cache in place (writeCache publishes only complete builds).
 */
import { watch, type FSWatcher } from 'chokidar'
import { resolve } from 'node:path'
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
  let watched = new Set([routesFile])

  const runBuild = async (changed: string[]): Promise<void> => {
    const { buildCache } = await import('../compiler/index.js')
    try {
      const result = await buildCache({ routesFile, cacheDir: options.cacheDir })
      const inputs = Object.keys(result.manifest.inputs).map((file) =>
        resolve(options.cacheDir, file),
      )
      const next = new Set([routesFile, ...inputs])
      watcher?.unwatch([...watched].filter((f) => !next.has(f)))
      watcher?.add([...next].filter((f) => !watched.has(f)))
      watched = next
      await options.onBuild(result, changed)
    } catch (error) {
      options.onError(error, changed)
    }
  }

  const schedule = (file: string): void => {
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
    const started = watch([...watched], {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
    })
    watcher = started
    started.on('change', schedule).on('add', schedule).on('unlink', schedule)
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
