/**
 * The process-wide throttle the kernel uses when a route names `throttle` and the app passed no
 * factory of its own: one store chosen from the environment (createStoreFromEnv), shared by every
 * kernel the process boots, so counters survive `fw serve --watch` reloads.
 */
import type { MiddlewareFactory } from '../runtime/types.js'
import { createThrottle } from './middleware.js'
import { createStoreFromEnv } from './store-from-env.js'
import type { ThrottleStore } from './store.js'

interface DefaultThrottle {
  factory: MiddlewareFactory
  store: ThrottleStore
}

// On globalThis, not in a module variable: a routes file may load another copy of this module
// (src vs dist) than `fw serve` does, and both must count against the same store.
const SHARED = Symbol.for('fw.throttle.default')
const registry = globalThis as { [SHARED]?: Promise<DefaultThrottle> | null }

/**
 * The `throttle` factory of this process (Redis when REDIS_URL is set, the primary's counters in
 * a `--workers` worker, else memory), made on first use.
 * @example
 * Kernel.boot({ ..., middleware: { throttle: await defaultThrottle() } })
 */
export async function defaultThrottle(): Promise<MiddlewareFactory> {
  registry[SHARED] ??= createStoreFromEnv().then((store) => ({
    store,
    factory: createThrottle({ store }),
  }))
  return (await registry[SHARED]).factory
}

/** Replaces the process-wide throttle (tests, apps configuring it in code); null resets it. */
export function setDefaultThrottle(
  throttle: { factory: MiddlewareFactory; store: ThrottleStore } | null,
): void {
  registry[SHARED] = throttle === null ? null : Promise.resolve(throttle)
}

/** Closes the default throttle's store (its Redis connection) at shutdown. */
export async function closeDefaultThrottle(): Promise<void> {
  const current = registry[SHARED]
  registry[SHARED] = null
  if (current) await (await current).store.close?.()
}
