/** `fw serve --watch`: rebuild on change, put the new routes to work, say what changed. */
import { isAbsolute, relative, sep } from 'node:path'
import type { Registrar } from '../define/registrar.js'
import type { Manifest } from '../shared/cache-format.js'
import { count } from '../shared/count.js'
import { escapeControls } from '../shared/escape-controls.js'
import type { ServeOptions } from './serve.js'
import { warned } from './first-build.js'
import { watchRoutes, type RouteWatcher } from './watch-routes.js'

/**
 * Rebuilds when the routes or their imports change; `reload` puts the new routes to work, then
 * one "reloaded" line. The next rebuild waits for the reload (see watchRoutes' onBuild). A failed
 * rebuild or reload keeps the running routes. `serving`: the build the server started from; the
 * watcher's own first build reloads only when the sources changed since (an edit saved while the
 * server booted, before the files were watched, was built and never served).
 */
export function watchAndReload(
  options: ServeOptions,
  reload: (register: (r: Registrar) => void) => Promise<void>,
  serving: Manifest,
): RouteWatcher {
  return watchRoutes({
    routesFile: options.routes,
    cacheDir: options.cache,
    onBuild: async (result, changed) => {
      warned(options, result)
      if (changed.length === 0 && sameSources(result.manifest, serving)) return
      await reload(result.register)
      const what =
        changed.length === 0 ? 'while starting' : `changed: ${changed.map(shown).join(', ')}`
      options.say(`reloaded ${count(result.manifest.routeCount, 'route')} (${what})`)
    },
    onError: (error) => {
      options.onError(error)
      options.warn('keeping the running routes; waiting for changes')
    },
  })
}

/**
 * A changed file as the user named their routes file: relative to the working folder, and with
 * any control character in its name escaped (a line break or ESC would forge or hide output).
 */
function shown(file: string): string {
  const near = relative(process.cwd(), file)
  return escapeControls(
    near === '..' || near.startsWith('..' + sep) || isAbsolute(near) ? file : near,
  )
}

/** Whether two builds read the same source files with the same contents (the handlers' too). */
function sameSources(a: Manifest, b: Manifest): boolean {
  const files = Object.keys(a.inputs)
  return (
    files.length === Object.keys(b.inputs).length &&
    files.every((file) => a.inputs[file] === b.inputs[file])
  )
}
