/**
 * Resolves CLI defaults: flags win, then `fw.config.{ts,mjs,js}` in the working directory, then the
 * built-in defaults (routes.ts, .fw/cache). The config file may also set the configuration
 * variables of DESIGN.md (JWT_SECRET, APP_ENV, DATABASE_URL, REDIS_URL, TRUSTED_PROXIES), which
 * then win over the environment.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { displayPath } from '../define/location.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { CONFIG_FILE_MARKER, CONFIG_VARS_MARKER } from '../shared/config-markers.js'

/** The configuration variables (DESIGN.md "Configuration"). */
export const CONFIG_VARIABLES = [
  'JWT_SECRET',
  'APP_ENV',
  'DATABASE_URL',
  'REDIS_URL',
  'TRUSTED_PROXIES',
] as const
type ConfigVariable = (typeof CONFIG_VARIABLES)[number]
type EnvValue = string | number | boolean | undefined

/**
 * @example
 * // fw.config.ts
 * export default { routes: 'app/routes.ts', APP_ENV: 'production', env: { URL_SIGNING_KEYS: 'k1,k2' } }
 */
export interface FwConfig extends Partial<Record<ConfigVariable, EnvValue>> {
  routes?: string
  cache?: string
  /** Environment variables to set before the app starts; they win over the environment. */
  env?: Record<string, EnvValue>
  /** Extra kernel options for `fw serve`. */
  kernel?: object
}

export const DEFAULT_ROUTES = 'routes.ts'
export const DEFAULT_CACHE = '.fw/cache'
const CONFIG_FILES = ['fw.config.ts', 'fw.config.mjs', 'fw.config.js']

/** The config file's default export, or {} without a config file. */
export async function readConfig(cwd = process.cwd()): Promise<FwConfig> {
  const file = CONFIG_FILES.map((name) => resolve(cwd, name)).find((path) => existsSync(path))
  if (!file) return {}
  const { importModule, locateInStack } = await import('../compiler/import-module.js')
  let config: unknown
  try {
    config = (await importModule(file)).module.default ?? {}
  } catch (error) {
    if (error instanceof FwError) throw asConfigError(file, error)
    const message = error instanceof Error ? error.message : String(error)
    throw configError(
      file,
      `The config file threw while it was loaded: ${message}`,
      locateInStack(error, (path) => resolve(path) === file),
      error,
    )
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw configError(file, 'The config file must export an object as its default export')
  }
  configFiles.set(config, file)
  return config as FwConfig
}

// The file each config read by readConfig came from.
const configFiles = new WeakMap<object, string>()

/**
 * An error importModule raised for the config file (it speaks of "routes"): FW_CONFIG_INVALID at
 * the same place, with a hint that names the file to fix. A failed temporary write stays as is.
 */
function asConfigError(file: string, error: FwError): FwError {
  if (error.code === 'FW_TEMP_WRITE' || error.code === 'FW_CONFIG_INVALID') return error
  const culprit = error.location?.file ?? displayPath(file)
  const importedBy = culprit === displayPath(file) ? '' : ` (imported by ${displayPath(file)})`
  const hint =
    error.code === 'FW_ROUTES_SYNTAX'
      ? `Fix ${culprit}${importedBy} so that it compiles; fw reads ${displayPath(file)} before every command.`
      : (error.hint ?? `Fix ${displayPath(file)}.`)
  return new FwError('FW_CONFIG_INVALID', error.message, {
    hint,
    location: error.location ?? { file: displayPath(file), line: 1, column: 1 },
    cause: error,
  })
}

/**
 * Sets the configuration variables the config gives (top level or under `env`) in `env`:
 * "environment, overridable by fw.config.ts". Returns the names it set.
 */
export function applyConfigEnv(config: FwConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const values: Record<string, EnvValue> = {}
  for (const name of CONFIG_VARIABLES) if (config[name] !== undefined) values[name] = config[name]
  Object.assign(values, config.env)
  const set: string[] = []
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue
    env[name] = String(value)
    set.push(name)
  }
  delete env[CONFIG_VARS_MARKER]
  delete env[CONFIG_FILE_MARKER]
  if (set.length > 0) {
    env[CONFIG_VARS_MARKER] = set.join(',')
    env[CONFIG_FILE_MARKER] = displayPath(configFiles.get(config) ?? resolve(CONFIG_FILES[0]!))
  }
  return set
}

/** The routes file and cache directory: flags, then `config` (read here when not given), then defaults. */
export async function resolvePaths(
  flags: { routes?: string; cache?: string },
  given?: FwConfig,
): Promise<{ routes: string; cache: string }> {
  const config = given ?? (flags.routes && flags.cache ? {} : await readConfig())
  return {
    routes: flags.routes ?? config.routes ?? DEFAULT_ROUTES,
    cache: flags.cache ?? config.cache ?? DEFAULT_CACHE,
  }
}

function configError(
  file: string,
  message: string,
  location?: SourceLocation,
  cause?: unknown,
): FwError {
  return new FwError('FW_CONFIG_INVALID', message, {
    hint: `Fix ${displayPath(file)} (run with --debug for the stack).`,
    location: location ?? { file: displayPath(file), line: 1, column: 1 },
    ...(cause === undefined ? {} : { cause }),
  })
}
