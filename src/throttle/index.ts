/**
 * Throttling: the `throttle:<max>,<seconds>` middleware and its counter stores.
 *
 * @example
 * import { createThrottle, createStoreFromEnv } from '../throttle/index.js'
 * const kernel = await Kernel.boot({
 *   routeCache, register,
 *   middleware: { throttle: createThrottle({ store: await createStoreFromEnv() }) },
 * })
 */
export { createThrottle, type ThrottleOptions } from './middleware.js'
export { defaultThrottle, setDefaultThrottle, closeDefaultThrottle } from './default-throttle.js'
export { createStoreFromEnv, createRedisStore } from './store-from-env.js'
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js'
export { ClusterStore, setupThrottlePrimary, type ClusterStoreOptions } from './cluster-store.js'
export { ThrottleStoreError, type ThrottleStore } from './store.js'
export { SlidingWindowLog, parseRule, systemClock, DEFAULT_RULE } from './limiter.js'
export type { Clock, ThrottleDecision, ThrottleRule } from './limiter.js'
export type { StandardHeaders } from './headers.js'
export { addressBucket } from './client-key.js'
export type { RedisStore, RedisStoreOptions } from './redis-store.js'
