/** The revocation list in memory and in real Redis: TTL until the token's exp, test-and-set, bounds. */
import { randomBytes } from 'node:crypto'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import {
  connectRedisRevocations,
  MemoryRevocationList,
  RevocationListFullError,
  RedisRevocationList,
  type RevocationList,
} from '../../src/auth/revocation.js'
import { reachable, REDIS_URL } from './support.js'

const redisUp = await reachable(REDIS_URL)
const prefix = `fw:test:${process.pid}:${randomBytes(3).toString('hex')}:`
const nowSeconds = (): number => Math.floor(Date.now() / 1000)
const jti = (): string => randomBytes(16).toString('hex')

const lists: { name: string; available: boolean; make: () => Promise<RevocationList> }[] = [
  { name: 'memory', available: true, make: async () => new MemoryRevocationList() },
  { name: 'redis', available: redisUp, make: () => connectRedisRevocations(REDIS_URL, { prefix }) },
]

for (const { name, available, make } of lists) {
  describe.runIf(available)(`the ${name} revocation list`, () => {
    const opened: RevocationList[] = []
    const list = async (): Promise<RevocationList> => {
      const made = await make()
      opened.push(made)
      return made
    }
    afterAll(async () => {
      for (const l of opened) await l.close?.()
    })

    it('remembers a jti until the token expires', async () => {
      const revocations = await list()
      const id = jti()
      expect(await revocations.isRevoked(id)).toBe(false)
      expect(await revocations.revoke(id, nowSeconds() + 60)).toBe(true)
      expect(await revocations.isRevoked(id)).toBe(true)
      expect(await revocations.isRevoked(id.toUpperCase())).toBe(true)
      expect(await revocations.isRevoked(jti())).toBe(false)
    })

    // Expired beyond the clock tolerance: Redis keeps a key 30 s past exp, for hosts whose clocks
    // lag the revoking host's (review2-revocation.test.ts).
    it('stores nothing for a token that already expired', async () => {
      const revocations = await list()
      const id = jti()
      expect(await revocations.revoke(id, nowSeconds() - 60)).toBe(true)
      expect(await revocations.isRevoked(id)).toBe(false)
    })

    it('is a test-and-set: of 20 concurrent revocations one wins', async () => {
      const revocations = await list()
      const id = jti()
      const results = await Promise.all(
        Array.from({ length: 20 }, () => revocations.revoke(id, nowSeconds() + 60)),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
    })
  })
}

describe.runIf(redisUp)('Redis specifics', () => {
  // 30 s past exp: Redis's clock decides when the key goes, each host's when the token expires.
  it('sets the key with a TTL that ends 30 s after exp, shared across connections', async () => {
    const redis = new Redis(REDIS_URL)
    const a = new RedisRevocationList(redis, { prefix })
    const b = await connectRedisRevocations(REDIS_URL, { prefix })
    const id = jti()
    await a.revoke(id, nowSeconds() + 120)
    const ttl = await redis.ttl(prefix + id)
    expect(ttl).toBeGreaterThan(140)
    expect(ttl).toBeLessThanOrEqual(150)
    expect(await b.isRevoked(id)).toBe(true)
    await redis.del(prefix + id)
    await a.close()
    await b.close()
  })

  it('rejects (so the middleware answers 503) when Redis is unreachable', async () => {
    const down = await connectRedisRevocations('redis://127.0.0.1:1')
    await expect(down.isRevoked(jti())).rejects.toThrow()
    await down.close()
  })
})

// A Redis that accepts the connection and then never answers held every authenticated request
// for as long as the connection lived (no command timeout, commands waiting in the offline queue).
describe('a Redis that stops answering', () => {
  it('fails a check within about a second instead of holding the request', async () => {
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => sockets.add(socket.on('error', () => {})))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as AddressInfo
    const list = await connectRedisRevocations(`redis://127.0.0.1:${port}`)
    await expect(list.isRevoked(jti())).rejects.toThrow(/timed out/i)
    // Given up on while the silent connection was still open: a timeout, not a dropped socket.
    expect([...sockets].map((socket) => socket.destroyed)).toEqual([false])
    await list.close().catch(() => {})
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => silent.close(resolve))
  })
})

describe('the memory list', () => {
  it('stays within its bound by dropping expired entries, and refuses more rather than forget a live one', async () => {
    let now = 1_000_000_000_000
    const list = new MemoryRevocationList({ maxEntries: 3, now: () => now })
    const t = now / 1000
    await list.revoke('old', t + 10)
    await list.revoke('a', t + 3600) // a long-lived token revoked first
    await list.revoke('b', t + 100)
    now += 20_000
    await list.revoke('c', t + 100) // 'old' has expired: it makes room
    expect(list.size).toBe(3)
    await expect(list.revoke('d', t + 100)).rejects.toBeInstanceOf(RevocationListFullError)
    expect(list.size).toBe(3)
    expect(await list.isRevoked('a')).toBe(true)
    expect(await list.isRevoked('d')).toBe(false)
    now += 100_000 // b and c expire
    expect(await list.revoke('d', t + 3600)).toBe(true)
    expect(await list.isRevoked('a')).toBe(true)
    expect(await list.isRevoked('d')).toBe(true)
  })
})
