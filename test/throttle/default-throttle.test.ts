/** Store selection from the environment, and the process-wide default throttle. */
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
import { freePort } from './support.js'

afterEach(() => closeDefaultThrottle())

describe('createStoreFromEnv', () => {
  it('uses memory without REDIS_URL (outside a cluster worker)', async () => {
    expect(await createStoreFromEnv({})).toBeInstanceOf(MemoryStore)
  })

  it('uses Redis when REDIS_URL is set, with the given key prefix', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`
    const store = await createStoreFromEnv({ REDIS_URL: url }, { redis: { prefix: 'app:' } })
    expect(store).toBeInstanceOf(RedisStore)
    await store.close?.()
  })
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
