/**
 * APP_ENV as every part reads it. `Production` or ` production ` (a capital, a stray space in a
 * .env file or a deploy setting) is production: read exactly, they ran as development, with no
 * HTTPS redirect, no secret check and error details shown.
 */

/**
 * Whether `value` (APP_ENV unless given) names production.
 * @example
 * isProduction('Production') // true
 */
export function isProduction(value: unknown = process.env.APP_ENV): boolean {
  // Not only strings: a fw.config.js `kernel: { env: 1 }` reaches here before the boot refuses it.
  return typeof value === 'string' && value.trim().toLowerCase() === 'production'
}

/** The environments a kernel knows (its `env` option). */
export type Env = 'production' | 'development' | 'test'
const ENVS: readonly string[] = ['production', 'development', 'test']

/**
 * The kernel's environment: its `env` option read as APP_ENV is (case and surrounding spaces
 * ignored: a fw.config.js `env: 'Production'` ran as development, error details allowed), else
 * production when APP_ENV says so, else development. Another option value is an error: a typo
 * there must not turn production off.
 * @example
 * envOf(' Production ') // 'production'
 */
export function envOf(option: string | undefined): Env {
  if (option === undefined) return isProduction() ? 'production' : 'development'
  const env = String(option).trim().toLowerCase()
  if (ENVS.includes(env)) return env as Env
  throw new TypeError(
    `env must be 'production', 'development' or 'test', not ${JSON.stringify(option)}`,
  )
}

// APP_ENV values that mean what they say when they run as development.
const DEVELOPMENT_NAMES = new Set(['', 'development', 'dev', 'local', 'test', 'testing'])

/**
 * A warning for an APP_ENV that runs as development though it may not be meant to (`prod`,
 * `staging`, `live`): only `production` turns on the HTTPS redirect, the JWT_SECRET check and
 * hidden error details. Null when APP_ENV is unset, production or a development name.
 */
export function appEnvWarning(value: string | undefined = process.env.APP_ENV): string | null {
  if (value === undefined || isProduction(value)) return null
  if (DEVELOPMENT_NAMES.has(value.trim().toLowerCase())) return null
  return `APP_ENV=${JSON.stringify(value)} runs as development (no HTTPS redirect, no JWT_SECRET check, error details allowed): only APP_ENV=production is production`
}
