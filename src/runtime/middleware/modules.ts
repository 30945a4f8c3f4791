/**
 * The aliases implemented by fw's optional modules (auth, role, throttle). They are imported
 * only when a route uses them, so an app without authentication loads no JWT or database code.
 */
import type { MiddlewareRef } from '../../shared/route-record.js'
import type { MiddlewareFactory } from '../types.js'

// The compiler checks the routes file's middleware; the global lists and tagged container entries
// reach the kernel unchecked (a number, or a list bound under one tag key).
const aliasName = (ref: MiddlewareRef): string | null => {
  if (typeof ref === 'string') return ref.split(':')[0]!
  if (typeof ref === 'function') return null
  throw new TypeError(`Middleware ${JSON.stringify(ref)} is not an alias string or a function`)
}

/**
 * Factories for the module aliases that `refs` use and `given` does not already implement. A ref
 * that is neither a string nor a function is a boot error.
 */
export async function moduleFactories(
  refs: Iterable<MiddlewareRef>,
  given: Readonly<Record<string, MiddlewareFactory>>,
): Promise<Record<string, MiddlewareFactory>> {
  const used = new Set<string>()
  for (const ref of refs) {
    const name = aliasName(ref)
    if (name !== null && !Object.hasOwn(given, name)) used.add(name)
  }
  const factories: Record<string, MiddlewareFactory> = {}
  if (used.has('auth') || used.has('role')) {
    const { defaultAuth } = await import('../../auth/index.js')
    const { auth, role } = defaultAuth().middleware
    if (used.has('auth')) factories.auth = auth
    if (used.has('role')) factories.role = role
  }
  if (used.has('throttle')) {
    // One factory per process: counters survive a --watch reload; REDIS_URL picks the store.
    const { defaultThrottle } = await import('../../throttle/index.js')
    factories.throttle = await defaultThrottle()
  }
  return factories
}
