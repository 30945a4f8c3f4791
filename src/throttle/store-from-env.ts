/**
 * Choosing and making stores: DESIGN.md's REDIS_URL rule, and the refusal to run several workers
 * on per-process memory (which would multiply every limit by the worker count).
 */
import cluster from 'node:cluster'
import { ClusterStore, PRIMARY_ENV } from './cluster-store.js'
import { MemoryStore } from './memory-store.js'
import type { RedisStore, RedisStoreOptions } from './redis-store.js'
import type { ThrottleStore } from './store.js'
import { checkOptions } from '../shared/option-names.js'

/**
 * A Redis store; ioredis is loaded only when one is made, so memory-only apps never load it.
 * @example
 * const store = await createRedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'app:throttle:' })
 */
export async function createRedisStore(options: RedisStoreOptions = {}): Promise<RedisStore> {
  const { RedisStore } = await import('./redis-store.js')
  return new RedisStore(options)
}

/**
 * The store DESIGN.md's configuration asks for: Redis when REDIS_URL is set; in a `--workers`
 * worker, the primary's counters over IPC; else in-process memory. A worker whose primary does
 * not serve counters (no `setupThrottlePrimary()`) is refused: per-worker memory would multiply
 * every limit by the worker count.
 * @example
 * const store = await createStoreFromEnv()
 */
export async function createStoreFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { redis?: Omit<RedisStoreOptions, 'url' | 'client'> } = {},
): Promise<ThrottleStore> {
  checkOptions('createStoreFromEnv()', options, ['redis'])
  if (env.REDIS_URL) return createRedisStore({ ...options.redis, url: env.REDIS_URL })
  if (!cluster.isWorker) return new MemoryStore()
  if (env[PRIMARY_ENV] === '1') return new ClusterStore()
  throw new Error(
    'Throttle counters of several workers need a shared store: set REDIS_URL, or call setupThrottlePrimary() in the primary before forking',
  )
}
