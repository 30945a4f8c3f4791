/** Store selection from the environment, and the process-wide default throttle. */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import {
  MemoryStore,
  closeDefaultThrottle,
  createStoreFromEnv,
  createThrottle,
  defaultThrottle,
  setDefaultThrottle,
} from '../../src/throttle/index.js'
import { RedisStore } from '../../src/throttle/redis-store.js'
import { deleteKeys, REDIS_URL, RUN_REDIS_TESTS } from './support.js'

afterEach(() => closeDefaultThrottle())

describe('createStoreFromEnv', () => {
  it('uses memory without REDIS_URL (outside a cluster worker)', async () => {
    expect(await createStoreFromEnv({})).toBeInstanceOf(MemoryStore)
  })

  it.runIf(RUN_REDIS_TESTS)(
    'uses Redis when REDIS_URL is set, with the given key prefix',
    async () => {
      const prefix = `fw:test:default-throttle:${randomUUID()}:`
      const store = await createStoreFromEnv({ REDIS_URL }, { redis: { prefix } })
      const admin = new Redis(REDIS_URL)
      try {
        expect(store).toBeInstanceOf(RedisStore)
        expect((await store.hit('client-1', { max: 5, windowMs: 60_000 })).allowed).toBe(true)
        expect(await admin.keys(`${prefix}*`)).toEqual([`${prefix}client-1`])
      } finally {
        await store.close?.()
        await deleteKeys(REDIS_URL, prefix)
        admin.disconnect()
      }
    },
  )
})

describe('defaultThrottle', () => {
  it('is one factory (and one store) for the whole process', async () => {
    const first = await defaultThrottle()
    expect(await defaultThrottle()).toBe(first)
  })

  it('can be replaced, and is made afresh after closing', async () => {
    const store = new MemoryStore()
    const factory = createThrottle({ store })
    setDefaultThrottle({ factory, store })
    expect(await defaultThrottle()).toBe(factory)
    await closeDefaultThrottle()
    expect(await defaultThrottle()).not.toBe(factory)
  })
})
