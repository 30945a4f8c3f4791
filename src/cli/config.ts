/**
 * Resolves CLI defaults: flags win, then `fw.config.{ts,mjs,js}` in the working directory, then the
 * built-in defaults (routes.ts, .fw/cache). The config file may also set the configuration
 * variables of DESIGN.md (JWT_SECRET, APP_ENV, DATABASE_URL, REDIS_URL, TRUSTED_PROXIES), which
 * then win over the environment.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { displayPath, locateInStack } from '../define/location.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { CONFIG_FILE_MARKER, CONFIG_VARS_MARKER, locateKey } from '../shared/config-markers.js'
import { thrownMessage } from '../shared/thrown.js'
import { KERNEL_OPTIONS } from '../runtime/kernel-options.js'
import { closestName } from '../shared/option-names.js'
import { CONFIG_VARIABLES, type ConfigValue, type FwConfig } from '../define/config.js'

export const DEFAULT_ROUTES = 'routes.ts'
export const DEFAULT_CACHE = '.fw/cache'
const CONFIG_FILES = ['fw.config.ts', 'fw.config.mjs', 'fw.config.js']

/** The config file's default export, or {} without a config file. */
export async function readConfig(cwd = process.cwd()): Promise<FwConfig> {
  const file = CONFIG_FILES.map((name) => resolve(cwd, name)).find((path) => existsSync(path))
  if (!file) return {}
  const { importModule } = await import('../compiler/import-module.js')
  let module: Record<string, unknown>
  try {
    module = (await importModule(file)).module
  } catch (error) {
    if (error instanceof FwError) throw asConfigError(file, error)
    const message = thrownMessage(error)
    throw configError(
      file,
      `The config file threw while it was loaded: ${message}`,
      locateInStack(error, (path) => resolve(path) === file),
      error,
    )
  }
  const config = await module.default
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw configError(
      file,
      'default' in module
        ? `The config file must export an object as its default export, not ${describe(config)}`
        : 'The config file has no default export',
      undefined,
      undefined,
      "Write `export default { routes: 'routes.ts' }` in " + displayPath(file) + '.',
    )
  }
  checkConfig(file, config as Record<string, unknown>)
  configFiles.set(config, file)
  return config as FwConfig
}

const KNOWN_KEYS: readonly string[] = ['routes', 'cache', 'env', 'kernel', ...CONFIG_VARIABLES]

/**
 * Refuses what fw would misread: an unknown key (a typo such as `rotues` would fall back to
 * routes.ts), a path that is not a string, `env` or a variable that is not a plain value.
 */
function checkConfig(file: string, config: Record<string, unknown>): void {
  const fail = (key: string, message: string, hint: string): never => {
    throw configError(file, message, keyLocation(file, key), undefined, hint)
  }
  for (const [key, value] of Object.entries(config)) {
    if (!KNOWN_KEYS.includes(key)) {
      const near = closestName(key, KNOWN_KEYS)
      fail(
        key,
        `Unknown key "${key}" in the config file`,
        near !== undefined
          ? `Did you mean "${near}"?`
          : `Known keys: ${KNOWN_KEYS.join(', ')}; set other environment variables under env: { ${key}: ... }.`,
      )
    }
    if ((key === 'routes' || key === 'cache') && value != null) {
      if (typeof value !== 'string' || value.trim() === '') {
        fail(
          key,
          `"${key}" must be a non-empty path string, not ${describe(value)}`,
          key === 'routes' ? "Write routes: 'routes.ts'." : "Write cache: '.fw/cache'.",
        )
      }
    } else if (key === 'env' || key === 'kernel') {
      if (value !== undefined && !isPlainObject(value)) {
        fail(key, `"${key}" must be an object, not ${describe(value)}`, `Write ${key}: { ... }.`)
      }
      if (key === 'kernel' && isPlainObject(value)) checkKernelKeys(value, fail)
    }
  }
  const variables: [string, unknown][] = CONFIG_VARIABLES.map((name) => [name, config[name]])
  if (isPlainObject(config.env)) variables.push(...Object.entries(config.env))
  for (const [name, value] of variables) {
    if (value === undefined || ['string', 'number', 'boolean'].includes(typeof value)) continue
    fail(
      name,
      `The variable ${name} must be a string, number or boolean, not ${describe(value)}`,
      'Environment variables hold text: set a string (or leave the variable out).',
    )
  }
}

/** A typo in `kernel` (`errorRender`) was ignored without a word, the option silently off. */
function checkKernelKeys(
  kernel: Record<string, unknown>,
  fail: (key: string, message: string, hint: string) => never,
): void {
  // routeCache and register: fw serve sets them from the config's routes and cache.
  const known = KERNEL_OPTIONS.filter((name) => name !== 'routeCache' && name !== 'register')
  for (const key of Object.keys(kernel)) {
    if (known.includes(key)) continue
    if (key === 'routeCache' || key === 'register') {
      const own = key === 'routeCache' ? "cache: '.fw/cache'" : "routes: 'routes.ts'"
      fail(key, `kernel.${key} is set by fw serve`, `Write ${own} at the top level of the config.`)
    }
    const near = closestName(key, known)
    fail(
      key,
      `Unknown kernel option "${key}" in the config file`,
      near !== undefined ? `Did you mean "${near}"?` : `Kernel options: ${known.join(', ')}.`,
    )
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'object') return 'an object'
  return typeof value === 'function' ? 'a function' : `${typeof value} ${String(value)}`
}

/**
 * Where `key` is written in the config file `config` was read from (see keyLocation), or
 * undefined for a config readConfig did not read (no config file).
 * @example
 * configKeyLocation(config, 'kernel') // { file: 'fw.config.ts', line: 4, column: 3 }
 */
export function configKeyLocation(config: FwConfig, key: string): SourceLocation | undefined {
  const file = configFiles.get(config)
  return file === undefined ? undefined : keyLocation(file, key)
}

/** Where `key` is written in the config file (its first `key:`), else line 1. */
function keyLocation(file: string, key: string): SourceLocation {
  return locateKey(displayPath(file), key)
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
  const values: Record<string, ConfigValue> = {}
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
  flags: { routes?: string; cache?: string; watch?: boolean },
  given?: FwConfig,
): Promise<{ routes: string; cache: string }> {
  const config = given ?? (flags.routes && flags.cache ? {} : await readConfig())
  const routes = flags.routes ?? config.routes ?? DEFAULT_ROUTES
  // A routes file the config names and that is not there: the config is what to fix (the
  // loader's own error would say to create routes.ts, a file fw would not read). A watch waits
  // for it instead, as for any file the build misses.
  const named = flags.routes === undefined && config.routes != null
  if (named && flags.watch !== true && !existsSync(resolve(routes))) {
    const where = configKeyLocation(config, 'routes')
    throw new FwError('FW_ROUTES_NOT_FOUND', `Routes file ${routes} does not exist`, {
      hint: `Create ${routes}, or point routes in ${where?.file ?? 'fw.config.ts'} at your routes file.`,
      ...(where === undefined ? {} : { location: where }),
    })
  }
  if (flags.cache === undefined && config.cache != null) await checkConfigCache(config)
  return { routes, cache: flags.cache ?? config.cache ?? DEFAULT_CACHE }
}

/**
 * A cache folder the config names that fw refuses to use (`/`, the home folder): said at that
 * line, with the fix there; the build's own error would say to change a --cache never given.
 */
async function checkConfigCache(config: FwConfig): Promise<void> {
  const { assertSafeDir } = await import('../compiler/cache-guard.js')
  try {
    assertSafeDir(config.cache!)
  } catch (error) {
    if (!(error instanceof FwError)) throw error
    const where = configKeyLocation(config, 'cache')
    throw new FwError(error.code, error.message, {
      hint: `Point cache in ${where?.file ?? 'fw.config.ts'} at a folder of its own, such as .fw/cache.`,
      ...(where === undefined ? {} : { location: where }),
    })
  }
}

function configError(
  file: string,
  message: string,
  location?: SourceLocation,
  cause?: unknown,
  hint = `Fix ${displayPath(file)} (run with --debug for the stack).`,
): FwError {
  return new FwError('FW_CONFIG_INVALID', message, {
    hint,
    location: location ?? { file: displayPath(file), line: 1, column: 1 },
    ...(cause === undefined ? {} : { cause }),
  })
}
