/**
 * Attacker audit (session 26): the per-user share of the in-memory revocation list was bypassed
 * by the revocations of a refresh-token family. A logout with its refresh_token, or a theft (a
 * rotated token presented again), revokes the access tokens of every rotation of the family
 * still live, and those were revoked without naming their user: one account rotating
 * /rt/auth/refresh (unthrottled) and then ending its own session filled the whole list, and
 * every user's logout and refresh answered 503 until the tokens expired (up to 900 s).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryRevocationList } from '../../src/auth/revocation.js'
import { cleanupTempDirs } from '../support/compile.js'
import { loginToken, send, withTwoUsers, type AuthApp } from './support.js'

afterAll(() => cleanupTempDirs())

const PASSWORD = 'correct horse battery'

const login = (app: AuthApp, email: string): Promise<string> => loginToken(app, email, PASSWORD)

/** Logs in under /rt and rotates `turns` times: the family then holds turns + 1 live access tokens. */
async function rotatedSession(
  app: AuthApp,
  email: string,
  turns: number,
): Promise<{ first: string; last: string; access: string }> {
  const rt = await send(app, 'POST', '/rt/auth/login', { json: { email, password: PASSWORD } })
  expect(rt.status, rt.text).toBe(200)
  const first = rt.body.refresh_token as string
  let last = first
  let access = rt.body.access_token as string
  for (let i = 0; i < turns; i++) {
    const rotated = await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: last } })
    expect(rotated.status, rotated.text).toBe(200)
    last = rotated.body.refresh_token as string
    access = rotated.body.access_token as string
  }
  return { first, last, access }
}

describe('family revocations count against their user', () => {
  const withUsers = (
    test: (app: AuthApp) => Promise<void>,
    revocations = new MemoryRevocationList({ maxEntries: 6, maxPerSubject: 3 }),
  ): Promise<void> => withTwoUsers({ revocations }, PASSWORD, test)

  it('a logout ending a long family leaves the others room to log out', async () => {
    await withUsers(async (app) => {
      const { last, access } = await rotatedSession(app, 'mallory@example.com', 8)
      await send(app, 'POST', '/auth/logout', { token: access, json: { refresh_token: last } })
      const ada = await login(app, 'ada@example.com')
      const logout = await send(app, 'POST', '/auth/logout', { token: ada })
      expect(logout.status, logout.text).toBe(204)
      expect((await send(app, 'GET', '/auth/me', { token: ada })).status).toBe(401)
    })
  })

  it('a theft of a long family leaves the others room to refresh', async () => {
    await withUsers(async (app) => {
      const { first } = await rotatedSession(app, 'mallory@example.com', 8)
      await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: first } })
      const ada = await login(app, 'ada@example.com')
      const logout = await send(app, 'POST', '/auth/logout', { token: ada })
      expect(logout.status, logout.text).toBe(204)
    })
  })

  it('a theft revokes the newest access tokens first, the ones a thief holds', async () => {
    await withUsers(async (app) => {
      const { first, access } = await rotatedSession(app, 'mallory@example.com', 8)
      // The share (3) is smaller than the family: the theft cannot revoke all of it (503),
      // but the token minted last, which only the thief rotating it has, is among those revoked.
      await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: first } })
      expect((await send(app, 'GET', '/auth/me', { token: access })).status).toBe(401)
    })
  })
})
