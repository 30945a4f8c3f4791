/**
 * Regressions of the twentieth audit of the auth recipe (token lifecycles as sequences), over
 * real HTTP against a Kernel on a compiled cache, with real SQLite and PostgreSQL: a logout that
 * ended a refresh-token session (its refresh_token sent along) left the session's other access
 * tokens working, and one of them could be exchanged at POST /auth/refresh, hour after hour; a
 * logout or refresh answered 503 (the database failing mid-way) could not be retried: the token
 * was revoked in memory but not in the database, so the retry was refused, the refresh token sent
 * along kept working, and a restart brought the logged-out token back.
 */
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createUser, type AuthOptions } from '../../src/auth/auth.js'
import { MemoryRevocationList, type RevocationList } from '../../src/auth/revocation.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import {
  POSTGRES_URL,
  reachable,
  send,
  startAuthRun as start,
  pgTables,
  type AuthApp,
  type Reply,
} from './support.js'

const PASSWORD = 'correct horse battery'
const pgUp = await reachable(POSTGRES_URL)
const tables = pgTables('audit20')

afterAll(async () => {
  cleanupTempDirs()
  await tables.drop()
})

const me = (app: AuthApp, token: string): Promise<Reply> => send(app, 'GET', '/auth/me', { token })
const rtRefresh = (app: AuthApp, refreshToken: string): Promise<Reply> =>
  send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: refreshToken } })
const exchange = (app: AuthApp, token: string): Promise<Reply> =>
  send(app, 'POST', '/auth/refresh', { json: { token } })

interface Session {
  access: string
  refresh: string
}

async function rtLogin(app: AuthApp): Promise<Session> {
  const reply = await send(app, 'POST', '/rt/auth/login', {
    json: { email: 'ada@example.com', password: PASSWORD },
  })
  expect(reply.status, reply.text).toBe(200)
  return { access: reply.body.access_token as string, refresh: reply.body.refresh_token as string }
}

async function rotate(app: AuthApp, refresh: string): Promise<Session> {
  const reply = await rtRefresh(app, refresh)
  expect(reply.status, reply.text).toBe(200)
  return { access: reply.body.access_token as string, refresh: reply.body.refresh_token as string }
}

async function expectRevoked(app: AuthApp, token: string): Promise<void> {
  const reply = await me(app, token)
  expect(reply.status, reply.text).toBe(401)
  expect(reply.body.error).toBe('Token revoked')
}

/**
 * A session rotated once (its login's access token still live) and a second session whose access
 * token was exchanged at /auth/refresh; each ended by a logout with its refresh_token. Resolves the
 * tokens that must stay dead, and the clock, for a check after a restart.
 */
async function scenario(options: AuthOptions): Promise<{ dead: string[]; clock: number }> {
  let clock = Date.now()
  const server = await start({ ...options, now: () => clock })
  const { app } = server
  try {
    await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
    const other = await rtLogin(app)

    // 1. Logout with the current access token and refresh token of a rotated session.
    const first = await rtLogin(app)
    clock += 60_000
    const current = await rotate(app, first.refresh)
    const out = await send(app, 'POST', '/auth/logout', {
      token: current.access,
      json: { refresh_token: current.refresh },
    })
    expect(out.status, out.text).toBe(204)
    await expectRevoked(app, current.access)
    expect((await rtRefresh(app, current.refresh)).status).toBe(401)
    // The login's access token of that session: revoked too (regression: 200 until its exp)...
    await expectRevoked(app, first.access)
    // ...so it cannot be exchanged in its last 300 s (regression: a fresh 3600 s token, and so on).
    clock += 650_000
    expect((await exchange(app, first.access)).status).toBe(400)

    // 2. A session whose access token was exchanged at /auth/refresh, ended by a logout made with
    // another token: the exchanged one is the session's, and is revoked with it.
    const second = await rtLogin(app)
    clock += 700_000
    const exchanged = await exchange(app, second.access)
    expect(exchanged.status, exchanged.text).toBe(200)
    const linked = exchanged.body.token as string
    expect((await me(app, linked)).status).toBe(200)
    const plain = await send(app, 'POST', '/auth/login', {
      json: { email: 'ada@example.com', password: PASSWORD },
    })
    const byOther = await send(app, 'POST', '/auth/logout', {
      token: plain.body.token as string,
      json: { refresh_token: second.refresh },
    })
    expect(byOther.status, byOther.text).toBe(204)
    await expectRevoked(app, linked)
    expect((await rtRefresh(app, second.refresh)).status).toBe(401)

    // The user's other session is untouched: it rotates, and its new access token works.
    const next = await rotate(app, other.refresh)
    expect((await me(app, next.access)).status).toBe(200)
    return { dead: [linked], clock } // the login's token has expired by now
  } finally {
    await server.stop()
  }
}

/** The scenario, then a restart on the same store: its tokens are still revoked. */
async function scenarioAndRestart(options: AuthOptions): Promise<void> {
  const { dead, clock } = await scenario(options)
  const again = await start({ ...options, now: () => clock })
  try {
    for (const token of dead) await expectRevoked(again.app, token)
  } finally {
    await again.stop()
  }
}

describe('a logout with a refresh_token revokes the live access tokens of its session', () => {
  it('SQLite, also after a restart', () =>
    scenarioAndRestart({ database: `sqlite:${join(tempDir('fw-audit20-'), 'app.db')}` }))

  it.runIf(pgUp)('PostgreSQL, also after a restart', () =>
    scenarioAndRestart({ database: POSTGRES_URL, tablePrefix: tables.next() }),
  )
})

/** Runs `body` while `table` cannot be used (renamed through a second connection). */
async function withTableGone<T>(file: string, table: string, body: () => Promise<T>): Promise<T> {
  const admin = new BetterSqlite3(file)
  admin.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`)
  try {
    return await body()
  } finally {
    admin.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`)
    admin.close()
  }
}

describe('a logout or refresh answered 503 by a failing database is finished by the retry', () => {
  it('logout with a refresh_token while the refresh tokens cannot be read', async () => {
    const file = join(tempDir('fw-audit20-'), 'app.db')
    const server = await start({ database: `sqlite:${file}` })
    const { app } = server
    try {
      await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
      const session = await rtLogin(app)
      const logout = (): Promise<Reply> =>
        send(app, 'POST', '/auth/logout', {
          token: session.access,
          json: { refresh_token: session.refresh },
        })
      const failed = await withTableGone(file, 'refresh_tokens', logout)
      expect(failed.status, failed.text).toBe(503)
      // The retry logs out (regression: 401 "Token revoked", and the refresh token kept rotating).
      const retry = await logout()
      expect(retry.status, retry.text).toBe(204)
      expect((await rtRefresh(app, session.refresh)).status).toBe(401)
      await expectRevoked(app, session.access)
    } finally {
      await server.stop()
    }
  })

  it('logout and refresh while the revoked tokens cannot be written, then a restart', async () => {
    let clock = Date.now()
    const options = { database: `sqlite:${join(tempDir('fw-audit20-'), 'app.db')}` }
    const file = options.database.slice('sqlite:'.length)
    const server = await start({ ...options, now: () => clock })
    const { app } = server
    let loggedOut: string
    let refreshed: string
    try {
      await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
      const login = (): Promise<Reply> =>
        send(app, 'POST', '/auth/login', { json: { email: 'ada@example.com', password: PASSWORD } })
      loggedOut = (await login()).body.token as string
      expect((await me(app, loggedOut)).status).toBe(200)
      const logout = (): Promise<Reply> =>
        send(app, 'POST', '/auth/logout', { token: loggedOut, json: {} })
      const failed = await withTableGone(file, 'revoked_tokens', logout)
      expect(failed.status, failed.text).toBe(503)
      const retry = await logout()
      expect(retry.status, retry.text).toBe(204) // regression: 401 "Token revoked"
      await expectRevoked(app, loggedOut)

      const held = (await login()).body.token as string
      clock += 3_400_000
      const refreshFailed = await withTableGone(file, 'revoked_tokens', () => exchange(app, held))
      expect(refreshFailed.status, refreshFailed.text).toBe(503)
      // Still the user's token (regression: "Token revoked", and the retry a 400: locked out).
      expect((await me(app, held)).status).toBe(200)
      const refreshRetry = await exchange(app, held)
      expect(refreshRetry.status, refreshRetry.text).toBe(200)
      refreshed = held
      expect((await exchange(app, held)).status).toBe(400)
    } finally {
      await server.stop()
    }
    // Both revocations were written: a restart keeps them (regression: the logout was forgotten).
    const again = await start({ ...options, now: () => clock })
    try {
      await expectRevoked(again.app, loggedOut)
      await expectRevoked(again.app, refreshed)
      expect((await exchange(again.app, refreshed)).status).toBe(400)
    } finally {
      await again.stop()
    }
  })
})

/** The jti of an access token (its payload, unverified: the test's own token). */
function jtiOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti as string
}

describe("a logout whose revocation of the session's access tokens fails part-way", () => {
  it('leaves the access token it was sent with working, so the retry finishes it', async () => {
    // A list that refuses one write once: the session's newer access token.
    let failOnce: string | undefined
    const memory = new MemoryRevocationList()
    const written: string[] = []
    const revocations: RevocationList = {
      revoke: async (jti, expiresAt) => {
        if (jti === failOnce) {
          failOnce = undefined
          throw new Error('revocation list down')
        }
        written.push(jti)
        return memory.revoke(jti, expiresAt)
      },
      isRevoked: (jti) => memory.isRevoked(jti),
    }
    const file = join(tempDir('fw-audit20-'), 'app.db')
    const server = await start({ database: `sqlite:${file}`, revocations })
    const { app } = server
    try {
      await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
      const first = await rtLogin(app)
      const second = await rotate(app, first.refresh)
      // The older access token is still the user's (rotation leaves it to its exp).
      expect((await me(app, first.access)).status).toBe(200)
      failOnce = jtiOf(second.access)
      const logout = (): Promise<Reply> =>
        send(app, 'POST', '/auth/logout', {
          token: first.access,
          json: { refresh_token: second.refresh },
        })
      const failed = await logout()
      expect(failed.status, failed.text).toBe(503)
      // Regression: the token sent was revoked before the write that failed, so the retry was a
      // 401 "Token revoked" and the newer access token outlived the logout.
      const retry = await logout()
      expect(retry.status, retry.text).toBe(204)
      // The token sent is written once, last, whatever order the store lists the session's in.
      expect(written).toEqual([jtiOf(second.access), jtiOf(first.access)])
      await expectRevoked(app, first.access)
      await expectRevoked(app, second.access)
      expect((await rtRefresh(app, second.refresh)).status).toBe(401)
    } finally {
      await server.stop()
    }
  })
})
