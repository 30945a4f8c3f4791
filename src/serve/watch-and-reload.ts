/** `fw serve --watch`: rebuild on change, put the new routes to work, say what changed. */
import { isAbsolute, relative, sep } from 'node:path'
import type { Registrar } from '../define/registrar.js'
import { count } from '../shared/count.js'
import { escapeControls } from '../shared/escape-controls.js'
import type { ServeOptions } from './serve.js'
import { watchRoutes, type RouteWatcher } from './watch-routes.js'

/**
 * Rebuilds when the routes or their imports change; `reload` puts the new routes to work, then
 * one "reloaded" line. The next rebuild waits for the reload (see watchRoutes' onBuild). A failed
 * rebuild or reload keeps the running routes.
 */
export function watchAndReload(
  options: ServeOptions,
  reload: (register: (r: Registrar) => void) => Promise<void>,
): RouteWatcher {
  return watchRoutes({
    routesFile: options.routes,
    cacheDir: options.cache,
    onBuild: async (result, changed) => {
      if (changed.length === 0) return
      await reload(result.register)
      options.say(
        `reloaded ${count(result.manifest.routeCount, 'route')} (changed: ${changed.map(shown).join(', ')})`,
      )
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
