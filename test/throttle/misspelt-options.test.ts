/**
 * Misspelt throttle options from plain JavaScript were ignored without a word:
 * `createThrottle({ failopen: false })` kept failing open, `new MemoryStore({ maxkeys: 100 })` kept
 * 50 000 counters. The factory and the stores now refuse a name they do not know, naming the
 * closest valid one, where they are made.
 */
import { describe, expect, it } from 'vitest'
import {
  ClusterStore,
  createRedisStore,
  createStoreFromEnv,
  createThrottle,
  MemoryStore,
  setupThrottlePrimary,
} from '../../src/throttle/index.js'

// Options as plain JavaScript passes them: no type to catch the typo.
const untyped = <T>(options: Record<string, unknown>): T => options as T

describe('throttle options', () => {
  it('createThrottle refuses a misspelt option, naming the one it resembles', () => {
    expect(() => createThrottle(untyped({ store: new MemoryStore(), failopen: false }))).toThrow(
      new TypeError('createThrottle(): unknown option `failopen` — did you mean `failOpen`?'),
    )
    expect(() => createThrottle(untyped({ standardHeader: 'draft-8' }))).toThrow(
      new TypeError(
        'createThrottle(): unknown option `standardHeader` — did you mean `standardHeaders`?',
      ),
    )
  })

  it('the stores refuse misspelt options', async () => {
    expect(() => new MemoryStore(untyped({ maxkeys: 100 }))).toThrow(
      new TypeError('new MemoryStore(): unknown option `maxkeys` — did you mean `maxKeys`?'),
    )
    expect(() => new ClusterStore(untyped({ timeout: 100 }))).toThrow(
      new TypeError('new ClusterStore(): unknown option `timeout` — did you mean `timeoutMs`?'),
    )
    // Refused before any connection is made.
    await expect(
      createRedisStore(untyped({ url: 'redis://127.0.0.1:6379', prefx: 'app:' })),
    ).rejects.toThrow(
      new TypeError('new RedisStore(): unknown option `prefx` — did you mean `prefix`?'),
    )
    await expect(createStoreFromEnv({}, untyped({ redsi: {} }))).rejects.toThrow(
      new TypeError('createStoreFromEnv(): unknown option `redsi` — did you mean `redis`?'),
    )
  })

  it('still takes every option, undefined ones included', () => {
    const factory = createThrottle({
      store: undefined,
      keyFn: undefined,
      tenant: undefined,
      standardHeaders: 'draft-8',
      failOpen: false,
      ipv6Prefix: 56,
      alias: 'throttle',
      warnEverySeconds: undefined,
    })
    expect(typeof factory).toBe('function')
    expect(new MemoryStore({ maxKeys: 10, clock: undefined }).size).toBe(0)
  })

  it('setupThrottlePrimary passes its MemoryStore options on without its own `store`', () => {
    const stop = setupThrottlePrimary({ store: undefined, maxKeys: 10 })
    stop()
    expect(() => setupThrottlePrimary(untyped({ maxkeys: 10 }))).toThrow(
      'new MemoryStore(): unknown option `maxkeys` — did you mean `maxKeys`?',
    )
  })
})
