/**
 * The shape of `fw.config.ts` (or `.mjs`/`.js`), which the CLI reads before every command: typed,
 * a typo in a kernel option is a compile error in the editor, not only a refusal at `fw serve`.
 */
import type { KernelOptions } from '../runtime/kernel-options.js'

/** The configuration variables of DESIGN.md a config may set at its top level. */
export const CONFIG_VARIABLES = [
  'JWT_SECRET',
  'APP_ENV',
  'DATABASE_URL',
  'REDIS_URL',
  'TRUSTED_PROXIES',
] as const

/** A variable's value: written to the environment as a string. */
export type ConfigValue = string | number | boolean | undefined

/**
 * The config file's default export.
 * @example
 * // fw.config.ts
 * export default { routes: 'app/routes.ts', APP_ENV: 'production', env: { URL_SIGNING_KEYS: 'k1,k2' } }
 */
export interface FwConfig extends Partial<Record<(typeof CONFIG_VARIABLES)[number], ConfigValue>> {
  routes?: string | undefined
  cache?: string | undefined
  /** Environment variables to set before the app starts; they win over the environment. */
  env?: Record<string, ConfigValue> | undefined
  /** Options of the kernel `fw serve` boots (its routes and cache are the ones above). */
  kernel?: Partial<Omit<KernelOptions, 'register' | 'routeCache'>> | undefined
}

/**
 * Types a config file; returns it as it is.
 * @example
 * // fw.config.ts
 * export default defineConfig({ routes: 'app/routes.ts', kernel: { requestScopeEnabled: true } })
 */
export function defineConfig(config: FwConfig): FwConfig {
  return config
}
