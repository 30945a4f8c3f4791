/** What the route watcher's tests share: a watcher whose builds are logged, and its fs watches. */
import { join } from 'node:path'
import { watchRoutes, type RouteWatcher } from '../../src/serve/watch-routes.js'

/** File-system watch handles open in this process (chokidar's, one per watched path). */
export const fsWatches = (): number =>
  process.getActiveResourcesInfo().filter((kind) => kind === 'FSEventWrap').length

/**
 * Watches `routesFile` into `<dir>/.fw/cache`; `builds` logs 'built' or 'failed: …' per build.
 * @example
 * const { watcher, builds } = loggedWatch(dir, join(dir, 'routes.mjs'))
 */
export function loggedWatch(
  dir: string,
  routesFile: string,
): { watcher: RouteWatcher; builds: string[] } {
  const builds: string[] = []
  const watcher = watchRoutes({
    routesFile,
    cacheDir: join(dir, '.fw', 'cache'),
    onBuild: () => void builds.push('built'),
    onError: (error) => void builds.push(`failed: ${String(error)}`),
  })
  return { watcher, builds }
}
