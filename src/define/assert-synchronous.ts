/**
 * Routes are collected synchronously: a routes function or group callback that returns a promise
 * is refused rather than losing what it registers after an await.
 */
import type { SourceLocation } from '../shared/errors.js'
import { FwError } from '../shared/errors.js'

/**
 * Refuses what a routes function or group callback returned when it is a promise (an async
 * function): routes are collected synchronously, so those it registers after an await would be
 * lost, silently. Its later rejection is caught first, so that it cannot crash the process.
 * @example
 * assertSynchronous(register(registrar), 'The routes function') // throws FW_ROUTES_ASYNC if async
 */
export function assertSynchronous(
  returned: unknown,
  what: string,
  where: () => SourceLocation | undefined = () => undefined,
): void {
  if (returned === null || (typeof returned !== 'object' && typeof returned !== 'function')) return
  const then = (returned as { then?: unknown }).then
  if (typeof then !== 'function') return
  try {
    ;(then as (ok: unknown, fail: unknown) => unknown).call(returned, undefined, () => {})
  } catch {
    // A thenable whose then() throws: nothing is left to catch.
  }
  const location = where()
  throw new FwError(
    'FW_ROUTES_ASYNC',
    `${what} returned a promise (is it async?): routes registered after an await would be lost`,
    {
      hint: 'Register routes synchronously (drop the async); top-level await in the routes module is fine, e.g. `const settings = await load()` above `export default (r) => { ... }`.',
      ...(location ? { location } : {}),
    },
  )
}
