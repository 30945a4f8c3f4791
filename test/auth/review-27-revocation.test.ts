/**
 * Review 2 of session 27: Redis revocation keys outlive exp by the tokens' clock tolerance, for
 * hosts whose clocks disagree. The host that revokes may be the one whose clock runs ahead.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { RedisRevocationList } from '../../src/auth/revocation.js'
import { reachable, REDIS_URL } from './support.js'

const redisUp = await reachable(REDIS_URL)
const prefix = `fw:test:review2:${process.pid}:${randomBytes(3).toString('hex')}:`

describe.runIf(redisUp)('a revocation made on a host whose clock runs ahead', () => {
  it('is seen by a host whose clock still takes the token for live', async () => {
    const redis = new Redis(REDIS_URL)
    try {
      // Host A's clock is 20 s ahead of host B's; the token expires in 10 s by B's clock, so B
      // still accepts it, while A sees it expired 10 s ago.
      const ahead = new RedisRevocationList(redis, { prefix, now: () => Date.now() + 20_000 })
      const behind = new RedisRevocationList(redis, { prefix })
      const id = randomBytes(16).toString('hex')
      const exp = Math.floor(Date.now() / 1000) + 10
      expect(await ahead.revoke(id, exp)).toBe(true)
      expect(await behind.isRevoked(id)).toBe(true)
      await redis.del(prefix + id)
    } finally {
      redis.disconnect()
    }
  })

  it('stores nothing for a token expired longer ago than the clock tolerance', async () => {
    const redis = new Redis(REDIS_URL)
    try {
      const list = new RedisRevocationList(redis, { prefix })
      const id = randomBytes(16).toString('hex')
      expect(await list.revoke(id, Math.floor(Date.now() / 1000) - 31)).toBe(true)
      expect(await redis.exists(prefix + id)).toBe(0)
    } finally {
      redis.disconnect()
    }
  })
})
