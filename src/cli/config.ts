/**
 * Resolves CLI defaults: flags win, then `fw.config.{ts,mjs,js}` in the working directory, then the
 * built-in defaults (routes.ts, .fw/cache).
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

export interface FwConfig {
  routes?: string
  cache?: string
}

export const DEFAULT_ROUTES = 'routes.ts'
export const DEFAULT_CACHE = '.fw/cache'
const CONFIG_FILES = ['fw.config.ts', 'fw.config.mjs', 'fw.config.js']

export async function readConfig(cwd = process.cwd()): Promise<FwConfig> {
  const file = CONFIG_FILES.map((name) => resolve(cwd, name)).find((path) => existsSync(path))
  if (!file) return {}
  const { importModule } = await import('../compiler/import-module.js')
  const { module } = await importModule(file)
  return (module.default ?? {}) as FwConfig
}

export async function resolvePaths(flags: { routes?: string; cache?: string }): Promise<{ routes: string; cache: string }> {
  const config = flags.routes && flags.cache ? {} : await readConfig()
  return {
    routes: flags.routes ?? config.routes ?? DEFAULT_ROUTES,
    cache: flags.cache ?? config.cache ?? DEFAULT_CACHE,
  }
}
