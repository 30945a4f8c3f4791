/**
 * The in-memory revocation list gives each user a share of its room (resource audit, session
 * 26). /auth/refresh and /auth/logout each revoke a token, so one account looping refresh (or
 * login, refresh and logout) filled the default 100 000 entries in about two and a half minutes
 * from one client, and kept them full: from then on every user's logout and refresh answered
 * 503 until the tokens expired. Now only that account's own revocations are refused.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { DurableRevocationList } from '../../src/auth/durable-revocation.js'
import { MemoryRevocationList, RevocationListFullError } from '../../src/auth/revocation.js'
import { cleanupTempDirs } from '../support/compile.js'
import { loginToken, send, startAuthRun as start, withTwoUsers, type AuthApp } from './support.js'

afterAll(() => cleanupTempDirs())

describe('MemoryRevocationList shares', () => {
  it('refuses a subject past its share, not the others, and takes it again once its entries expire', async () => {
    let now = 1_000_000_000_000
    const list = new MemoryRevocationList({ maxEntries: 10, maxPerSubject: 3, now: () => now })
    const t = now / 1000
    for (const jti of ['a1', 'a2', 'a3']) expect(await list.revoke(jti, t + 60, '7')).toBe(true)
    await expect(list.revoke('a4', t + 60, '7')).rejects.toBeInstanceOf(RevocationListFullError)
    await expect(list.revoke('a4', t + 60, '7')).rejects.toThrow(/subject "7"/)
    expect(await list.isRevoked('a4')).toBe(false)
    // Another user, and a revocation naming no subject, still fit.
    expect(await list.revoke('b1', t + 60, '8')).toBe(true)
    expect(await list.revoke('c1', t + 60)).toBe(true)
    // Already revoked stays a plain "already", even at the share.
    expect(await list.revoke('a1', t + 60, '7')).toBe(false)
    for (const jti of ['a1', 'a2', 'a3', 'b1', 'c1']) expect(await list.isRevoked(jti)).toBe(true)
    now += 61_000
    expect(await list.revoke('a4', t + 600, '7')).toBe(true)
    expect(await list.isRevoked('a4')).toBe(true)
    expect(await list.isRevoked('a1')).toBe(false)
  })

  it('defaults the share to a hundredth of the list', async () => {
    const list = new MemoryRevocationList({ maxEntries: 500 })
    const exp = Math.floor(Date.now() / 1000) + 60
    for (let i = 0; i < 5; i++) await list.revoke(`u${i}`, exp, '1')
    await expect(list.revoke('u5', exp, '1')).rejects.toBeInstanceOf(RevocationListFullError)
    expect(await list.revoke('v0', exp, '2')).toBe(true)
  })
})

const PASSWORD = 'correct horse battery'

const login = (app: AuthApp, email: string): Promise<string> => loginToken(app, email, PASSWORD)

describe('one account looping refresh and logout', () => {
  it('leaves the others room to log out', async () => {
    const revocations = new MemoryRevocationList({ maxEntries: 6, maxPerSubject: 5 })
    await withTwoUsers({ revocations }, PASSWORD, async (app) => {
      const rt = await send(app, 'POST', '/rt/auth/login', {
        json: { email: 'mallory@example.com', password: PASSWORD },
      })
      expect(rt.status, rt.text).toBe(200)
      let refresh = rt.body.refresh_token as string
      // Each turn: a new access token from the refresh token, revoked by a logout.
      const statuses: number[] = []
      for (let i = 0; i < 8; i++) {
        const rotated = await send(app, 'POST', '/rt/auth/refresh', {
          json: { refresh_token: refresh },
        })
        expect(rotated.status, rotated.text).toBe(200)
        refresh = rotated.body.refresh_token as string
        const token = rotated.body.access_token as string
        statuses.push((await send(app, 'POST', '/auth/logout', { token })).status)
      }
      expect(statuses).toEqual([204, 204, 204, 204, 204, 503, 503, 503])

      const ada = await login(app, 'ada@example.com')
      const logout = await send(app, 'POST', '/auth/logout', { token: ada })
      expect(logout.status, logout.text).toBe(204)
      expect((await send(app, 'GET', '/auth/me', { token: ada })).status).toBe(401)
    })
  })
})

describe('DurableRevocationList', () => {
  it('passes the subject to the list it keeps in memory, and writes nothing it refuses', async () => {
    const server = await start({ database: 'sqlite::memory:' })
    try {
      const store = (await server.auth.database()).revokedTokens
      const list = new DurableRevocationList({
        inner: new MemoryRevocationList({ maxPerSubject: 2 }),
        store: async () => store,
      })
      const exp = Math.floor(Date.now() / 1000) + 60
      expect(await list.revoke('d1', exp, '7')).toBe(true)
      expect(await list.revoke('d2', exp, '7')).toBe(true)
      await expect(list.revoke('d3', exp, '7')).rejects.toBeInstanceOf(RevocationListFullError)
      expect(await list.revoke('d4', exp, '8')).toBe(true)
      // Refused, d3 was written nowhere: in the database only, it was revoked after a restart
      // while the token kept working until then.
      const restarted = new DurableRevocationList({
        inner: new MemoryRevocationList(),
        store: async () => store,
      })
      expect(await restarted.isRevoked('d3')).toBe(false)
      expect(await restarted.isRevoked('d2')).toBe(true)
      // Already revoked is a plain "already", also with the share full.
      expect(await list.revoke('d1', exp, '7')).toBe(false)
    } finally {
      await server.stop()
    }
  })

  // Both passed the room check before either reached the list, and the one refused there stayed
  // in the database only.
  it('takes back the row of a revocation the list refused after a concurrent one', async () => {
    const server = await start({ database: 'sqlite::memory:' })
    try {
      const store = (await server.auth.database()).revokedTokens!
      // The real store, its inserts a moment slower (a database across the network): both calls
      // pass the room check before either reaches the list.
      const slow = {
        live: (now: number) => store.live(now),
        purgeExpired: (now: number) => store.purgeExpired(now),
        remove: (jti: string) => store.remove!(jti),
        insert: async (jti: string, expiresAt: number) => {
          await new Promise((r) => setTimeout(r, 20))
          return store.insert(jti, expiresAt)
        },
      }
      const list = new DurableRevocationList({
        inner: new MemoryRevocationList({ maxPerSubject: 1 }),
        store: async () => slow,
      })
      const exp = Math.floor(Date.now() / 1000) + 60
      const jtis = ['r1', 'r2']
      const outcomes = await Promise.allSettled(jtis.map((jti) => list.revoke(jti, exp, '9')))
      const won = outcomes.findIndex((o) => o.status === 'fulfilled')
      const lost = 1 - won
      expect(outcomes[won]).toEqual({ status: 'fulfilled', value: true })
      expect((outcomes[lost] as PromiseRejectedResult).reason).toBeInstanceOf(
        RevocationListFullError,
      )
      const restarted = new DurableRevocationList({
        inner: new MemoryRevocationList(),
        store: async () => store,
      })
      expect(await restarted.isRevoked(jtis[won]!)).toBe(true)
      expect(await restarted.isRevoked(jtis[lost]!)).toBe(false)
    } finally {
      await server.stop()
    }
  })
})
