/**
 * Regressions of the twenty-sixth audit (backing services that fail), with real Redis behind a
 * TCP proxy that can refuse connections and come back: on a connection passed in
 * (`createRedisStore({ client })`, ioredis's defaults), the checks that failed open during an
 * outage waited in the offline queue and were counted when Redis came back, so every client that
 * made requests during the outage was refused for a whole window after it.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedisStore } from '../../src/throttle/store-from-env.js'
import { startTcpProxy } from '../support/tcp-proxy.js'
import { deleteKeys, REDIS_URL, RUN_REDIS_TESTS } from './support.js'

const PREFIX = `fw:test:audit26:${randomUUID()}:`

afterAll(async () => {
  if (RUN_REDIS_TESTS) await deleteKeys(REDIS_URL, PREFIX)
})

const until = async (condition: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 20))
  expect(condition()).toBe(true)
}

describe.runIf(RUN_REDIS_TESTS)('a Redis outage on a connection passed in', () => {
  it('fails the checks at once and counts none of them when Redis is back', async () => {
    const proxy = await startTcpProxy(REDIS_URL)
    const client = new Redis(proxy.url)
    client.on('error', () => {})
    try {
      const store = await createRedisStore({ client, prefix: PREFIX })
      const rule = { max: 3, windowMs: 60_000 }
      expect((await store.hit('k', rule)).allowed).toBe(true)
      await proxy.down()
      await until(() => client.status !== 'ready')
      // Timers of this process fire in the order they are due, however busy it is. Before, each
      // check waited the store's 500 ms in ioredis's offline queue (2.5 s in all): the first
      // failed after this mark.
      const events: string[] = []
      const mark = setTimeout(() => events.push('mark'), 400)
      for (let i = 0; i < 5; i++) await expect(store.hit('k', rule)).rejects.toThrow()
      events.push('5 failed')
      clearTimeout(mark)
      expect(events).toEqual(['5 failed'])
      await proxy.up()
      await until(() => client.status === 'ready')
      // Anything queued while Redis was away is sent before this, on the same connection.
      expect(await client.ping()).toBe('PONG')
      // Before: the 5 queued checks were sent on reconnect and filled the window (3 of 3).
      expect(await client.llen(`${PREFIX}k`)).toBe(1)
      expect((await store.hit('k', rule)).allowed).toBe(true)
    } finally {
      client.disconnect()
      await proxy.close()
    }
  })
})
