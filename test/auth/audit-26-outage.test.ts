/**
 * Regressions of the twenty-sixth audit (backing services that fail), with real PostgreSQL behind
 * a TCP proxy that can stop forwarding and cut every connection: a connection lost while a
 * transaction held it (a refresh-token rotation, the first-use migration) emitted 'error' on a
 * pool client nobody listened to, an uncaught exception that stopped the whole server; and a
 * transaction whose query timed out waited for its ROLLBACK to time out too (30 s, not 15). And
 * a RedisRevocationList on a connection made with ioredis's defaults (its documented example)
 * held every authenticated request for as long as Redis stayed silent.
 */
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { RedisRevocationList } from '../../src/auth/revocation.js'
import { openPostgres } from '../../src/auth/stores/postgres.js'
import { startTcpProxy } from '../support/tcp-proxy.js'
import { pgTables, POSTGRES_URL, reachable, REDIS_URL } from './support.js'

const [pgUp, redisUp] = await Promise.all([reachable(POSTGRES_URL), reachable(REDIS_URL)])
const tables = pgTables('audit26')

afterAll(() => tables.drop())

describe.runIf(pgUp)('PostgreSQL connections lost during a transaction', () => {
  it('fails the rotation (a 503) and keeps the process running; the pool recovers', async () => {
    const proxy = await startTcpProxy(POSTGRES_URL)
    const db = await openPostgres(proxy.url, { tablePrefix: tables.next() })
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown): number => uncaught.push(error)
    process.on('uncaughtException', onUncaught)
    try {
      proxy.silence()
      const rotation = db.refreshTokens.rotate(
        'a'.repeat(64),
        { tokenHash: 'b'.repeat(64), expiresAt: '2999-01-01 00:00:00' },
        '2000-01-01 00:00:00',
      )
      // The rotation's first statement is on its way to PostgreSQL, which never answers.
      await expect.poll(() => proxy.held()).toBeGreaterThan(0)
      proxy.cut()
      await expect(rotation).rejects.toThrow(/Connection terminated/)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(uncaught).toEqual([])
      // The database is back: the next call gets a fresh connection.
      await expect(db.users.findByEmail('nobody@example.com')).resolves.toBeNull()
    } finally {
      process.off('uncaughtException', onUncaught)
      await db.close()
      await proxy.close()
    }
  })

  it('answers a transaction on a silent database after one query timeout, not two', async () => {
    const proxy = await startTcpProxy(POSTGRES_URL)
    const db = await openPostgres(proxy.url, { tablePrefix: tables.next(), queryTimeoutMs: 2000 })
    try {
      proxy.silence()
      // Timers of this process fire in the order they are due, however busy it is: the query's
      // timeout (2 s) comes before this mark (3 s), and a ROLLBACK's own timeout after it (4 s).
      const events: string[] = []
      const mark = setTimeout(() => events.push('1.5 query timeouts'), 3000)
      await expect(
        db.refreshTokens
          .rotate(
            'a'.repeat(64),
            { tokenHash: 'b'.repeat(64), expiresAt: '2999-01-01 00:00:00' },
            '2000-01-01 00:00:00',
          )
          .finally(() => events.push('rejected')),
      ).rejects.toThrow(/timeout/)
      clearTimeout(mark)
      // Before: the timed-out query's 2 s, then ROLLBACK's own 2 s (queued behind the query the
      // connection still waits on) before the call failed.
      expect(events).toEqual(['rejected'])
      proxy.cut()
      await expect(db.users.findByEmail('nobody@example.com')).resolves.toBeNull()
    } finally {
      await db.close()
      await proxy.close()
    }
  })
})

describe.runIf(redisUp)('a RedisRevocationList on a connection of your own, Redis silent', () => {
  it('fails a check within its time limit (a 503), and works again when Redis answers', async () => {
    const proxy = await startTcpProxy(REDIS_URL)
    const redis = new Redis(proxy.url)
    redis.on('error', () => {})
    const list = new RedisRevocationList(redis, {
      prefix: `fw:test:audit26:${Date.now()}:`,
      commandTimeoutMs: 300,
    })
    try {
      expect(await list.isRevoked('a1')).toBe(false)
      proxy.silence()
      // Before: pending for as long as Redis stayed silent.
      await expect(list.isRevoked('a1')).rejects.toThrow(/did not answer within 300 ms/)
      await expect(list.revoke('a1', Math.floor(Date.now() / 1000) + 60)).rejects.toThrow()
      proxy.cut()
      // (The timed-out revocation may land once ioredis reconnects: a1 is either; b2 is not.)
      await expect(list.isRevoked('b2')).resolves.toBe(false)
    } finally {
      await list.close()
      await proxy.close()
    }
  })

  // While ioredis reconnects, each check waited its whole time limit in the offline queue, and
  // all of them were sent when Redis came back.
  it('fails at once while the connection is lost, queueing nothing, and works again after', async () => {
    const proxy = await startTcpProxy(REDIS_URL)
    const redis = new Redis(proxy.url, { retryStrategy: () => 50 })
    redis.on('error', () => {})
    const prefix = `fw:test:audit26:${Date.now()}:down:`
    const list = new RedisRevocationList(redis, { prefix, commandTimeoutMs: 60_000 })
    try {
      expect(await list.isRevoked('c1')).toBe(false)
      await proxy.down()
      while (redis.status === 'ready') await new Promise((r) => setTimeout(r, 10))
      await expect(list.isRevoked('c1')).rejects.toThrow(/Redis connection is/)
      await expect(list.revoke('c1', Math.floor(Date.now() / 1000) + 60)).rejects.toThrow()
      await proxy.up()
      while ((redis.status as string) !== 'ready') await new Promise((r) => setTimeout(r, 10))
      // Refused, not queued: the revocation was not sent when Redis came back.
      expect(await list.isRevoked('c1')).toBe(false)
    } finally {
      await list.close()
      await proxy.close()
    }
  })

  // Down from the start: each check waited out ioredis's retries, then the time limit, one after
  // another, as if the first connection were still on its way.
  it('fails at once once a first connection has failed, and works when Redis is reached', async () => {
    const proxy = await startTcpProxy(REDIS_URL)
    await proxy.down()
    const redis = new Redis(proxy.url, { retryStrategy: () => 50, maxRetriesPerRequest: 1 })
    redis.on('error', () => {})
    const prefix = `fw:test:audit26:${Date.now()}:never:`
    const list = new RedisRevocationList(redis, { prefix, commandTimeoutMs: 60_000 })
    try {
      await expect(list.isRevoked('d1')).rejects.toThrow()
      await expect(list.isRevoked('d1')).rejects.toThrow(/Redis connection is/)
      await expect(list.revoke('d1', Math.floor(Date.now() / 1000) + 60)).rejects.toThrow(
        /Redis connection is/,
      )
      await proxy.up()
      while ((redis.status as string) !== 'ready') await new Promise((r) => setTimeout(r, 10))
      expect(await list.isRevoked('d1')).toBe(false)
      expect(await list.revoke('d1', Math.floor(Date.now() / 1000) + 60)).toBe(true)
      expect(await list.isRevoked('d1')).toBe(true)
    } finally {
      await list.close()
      await proxy.close()
    }
  })
})
