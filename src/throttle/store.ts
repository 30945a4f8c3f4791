/**
 * What the middleware needs from a counter store. Memory, the cluster primary and Redis implement
 * it with the same sliding window log (see limiter.ts), so their decisions and headers agree.
 */
import type { ThrottleDecision, ThrottleRule } from './limiter.js'

/**
 * A place where throttle counters live.
 * @example
 * const decision = await store.hit('route:login|5,300|ip:203.0.113.9', { max: 5, windowMs: 300_000 })
 * if (!decision.allowed) throw tooManyRequests()
 */
export interface ThrottleStore {
  /**
   * Checks one request against `key` and records it when allowed, atomically: concurrent hits
   * on a key never admit more than `rule.max` per window. Rejects (with ThrottleStoreError) only
   * when the backend cannot be reached; the middleware then fails open or closed.
   */
  hit(key: string, rule: ThrottleRule): ThrottleDecision | Promise<ThrottleDecision>
  /**
   * The refusal a hit on `key` would get now, or null when it would pass; records nothing.
   * Optional: without it, a 429 of a stacked limit reports only the limit that refused.
   */
  peek?(key: string, rule: ThrottleRule): ThrottleDecision | null | Promise<ThrottleDecision | null>
  /** Gives back the admission made at `stamp` (a stacked limit refused the request after all). */
  release(key: string, rule: ThrottleRule, stamp: number): void | Promise<void>
  /** Frees connections and listeners; the store is unusable afterwards. */
  close?(): void | Promise<void>
}

/**
 * The store's backend is unreachable or did not answer in time.
 * @example
 * throw new ThrottleStoreError('Redis throttle check failed: connect ECONNREFUSED', { cause })
 */
export class ThrottleStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ThrottleStoreError'
  }
}
