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
export function isProduction(value: string | undefined = process.env.APP_ENV): boolean {
  return value?.trim().toLowerCase() === 'production'
}
