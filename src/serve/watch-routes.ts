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

/** A file a routes file may import (a failed build may be waiting for it): not fw's own bundle. */
function isSourceFile(path: string): boolean {
  return SOURCE.test(path) && !TEMP.test(path)
}

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
  return new RouteWatch(options)
}

class RouteWatch implements RouteWatcher {
  readonly ready: Promise<void>
  readonly #options: WatchOptions
  readonly #routesFile: string
  readonly #always: string[]
  // Made after the first build, on every file it read: chokidar's 'ready' then covers them all.
  // Files added to a watcher later are watched some time after add() returns, with no event to
  // say when, so an edit made just after the banner (which waits for `ready`) could be missed.
  #watcher: FSWatcher | null = null
  #running: Promise<void> | null = null
  #pending = new Set<string>()
  #watched: Set<string>
  #failed = false
  #closed = false
  // The folders of the files are watched, not the files: chokidar loses a file that is deleted
  // and created again (git checkout, editors' safe writes) when a parent folder is watched too.
  #folders: Set<string>

  constructor(options: WatchOptions) {
    this.#options = options
    this.#routesFile = resolve(options.routesFile)
    // The tsconfig.json esbuild reads (its `paths` resolve imports) is no input of the build.
    const config = nearestTsconfig(dirname(this.#routesFile))
    this.#always = config === null ? [this.#routesFile] : [this.#routesFile, config]
    this.#watched = new Set(this.#always)
    this.#folders = foldersOf(this.#watched)
    this.ready = this.#build([]).then(() => this.#startWatching())
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.ready
    await this.#watcher?.close()
    await this.#running
  }

  async #build(changed: string[]): Promise<void> {
    const { buildCache } = await import('../compiler/index.js')
    try {
      const result = await buildCache({
        routesFile: this.#routesFile,
        cacheDir: this.#options.cacheDir,
      })
      this.#watchInputs(result)
      this.#failed = false
      await this.#options.onBuild(result, changed)
    } catch (error) {
      this.#failed = true
      this.#options.onError(error, changed)
    }
  }

  /** Watches the folders of the files `result` read, and no longer those of the files it did not. */
  #watchInputs(result: BuildCacheResult): void {
    const inputs = Object.keys(result.manifest.inputs).map((file) =>
      resolve(this.#options.cacheDir, file),
    )
    this.#watched = new Set([...this.#always, ...inputs])
    // A build that finishes after close() changes nothing: chokidar's add() reopens a closed
    // watcher, and its new folders' watches would keep the process alive.
    if (this.#closed) return
    const next = foldersOf(this.#watched)
    const gone = [...this.#folders].filter((f) => !next.has(f))
    const added = [...next].filter((f) => !this.#folders.has(f))
    // Set first: chokidar asks #ignores about the folders being added.
    this.#folders = next
    this.#watcher?.unwatch(gone)
    this.#watcher?.add(added)
  }

  /**
   * Whether chokidar leaves `path` alone: a file of a watched folder that no build reads and that
   * no failed build could be waiting for (no source file, or fw's own temporary bundle). chokidar
   * watches every file of a folder, and one removed while it waits for the write to finish
   * (awaitWriteFinish) is forgotten with its watch left open: the temporary file of each atomic
   * save (`sed -i`, editors' safe writes, renamed over the routes file) or an editor's scratch file
   * left a watch handle open for as long as the server ran.
   */
  #ignores(path: string): boolean {
    if (this.#folders.has(path) || this.#watched.has(path)) return false
    return !isSourceFile(path)
  }

  #schedule(event: string, file: string): void {
    if (this.#closed || !this.#isRelevant(event, file)) return
    this.#pending.add(file)
    if (this.#running) return
    this.#running = this.#buildPending()
  }

  #isRelevant(event: string, file: string): boolean {
    // A new source file beside the others may be the import a failed build could not resolve.
    const relevant =
      this.#watched.has(file) || (this.#failed && event === 'add' && isSourceFile(file))
    return relevant && ['add', 'change', 'unlink'].includes(event)
  }

  /** Builds until no change is pending: one build at a time, the events of each coalesced. */
  async #buildPending(): Promise<void> {
    while (this.#pending.size > 0) {
      const changed = [...this.#pending]
      this.#pending = new Set()
      await this.#build(changed)
    }
    this.#running = null
  }

  #startWatching(): Promise<void> {
    const started = watch([...this.#folders], {
      ignoreInitial: true,
      depth: 0,
      awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
      ignored: (path: string) => this.#ignores(path),
    })
    this.#watcher = started
    started.on('all', (event, file) => this.#schedule(event, file))
    return new Promise<void>((resolve) => started.once('ready', () => resolve()))
  }
}
