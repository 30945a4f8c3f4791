/**
 * Regressions of the third audit of the auth recipe, over real HTTP against a Kernel on a compiled
 * cache, with a real SQLite store and a real PostgreSQL one: a JSON `null` body, a whitespace-only
 * email, a logout whose body cannot be read, an email holding a NUL on PostgreSQL, and a refresh
 * rotated on PostgreSQL while its family was being revoked.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuth, createUser, type Auth } from '../../src/auth/auth.js'
import { hashRefreshToken } from '../../src/auth/refresh-tokens.js'
import { formatDateTime } from '../../src/auth/stores/types.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import {
  POSTGRES_URL,
  reachable,
  SECRET,
  send,
  serveAuthApp,
  uniquePrefix,
  type AuthApp,
  type Reply,
} from './support.js'

interface Session {
  access_token: string
  refresh_token: string
}

async function rtLogin(app: AuthApp, email: string, password: string): Promise<Session> {
  const reply = await send(app, 'POST', '/rt/auth/login', { json: { email, password } })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as unknown as Session
}

let auth: Auth
let app: AuthApp

beforeAll(async () => {
  auth = createAuth({
    secret: SECRET,
    database: `sqlite:${join(tempDir('fw-audit3-'), 'app.db')}`,
    production: false,
  })
  app = await serveAuthApp(auth)
  await createUser(auth, { email: 'ada@example.com', name: 'Ada', password: 'correct horse' })
})

afterAll(async () => {
  await app.close()
  await auth.close()
  cleanupTempDirs()
})

describe('a JSON body that is null', () => {
  it('answers 400 "required" (regression: 415 "send application/json" to a JSON body)', async () => {
    for (const path of ['/auth/login', '/rt/auth/login', '/auth/refresh', '/rt/auth/refresh']) {
      const reply = await send(app, 'POST', path, { body: 'null', type: 'application/json' })
      expect(reply.status, `${path} ${reply.text}`).toBe(400)
      expect(reply.body.error).toMatch(/required/)
    }
    const oauth = await send(app, 'POST', '/oauth/token', {
      body: 'null',
      type: 'application/json',
    })
    expect(oauth.status).toBe(400)
    expect(oauth.body).toEqual({
      error: 'unsupported_grant_type',
      error_description: expect.any(String),
    })
  })
})

describe('a whitespace-only email', () => {
  it('is a missing email: 400 (regression: 401 "Invalid credentials")', async () => {
    for (const path of ['/auth/login', '/rt/auth/login']) {
      const reply = await send(app, 'POST', path, {
        json: { email: ' \t ', password: 'correct horse' },
      })
      expect(reply.status, path).toBe(400)
      expect(reply.body.error).toBe('Email and password are required')
    }
  })
})

describe('POST /auth/logout with a body it cannot read', () => {
  it('answers 415 and revokes nothing (regression: 204, and the refresh token kept working)', async () => {
    const session = await rtLogin(app, 'ada@example.com', 'correct horse')
    // fetch() sends a string body as text/plain unless told otherwise.
    const out = await send(app, 'POST', '/auth/logout', {
      token: session.access_token,
      body: JSON.stringify({ refresh_token: session.refresh_token }),
      type: 'text/plain;charset=UTF-8',
    })
    expect(out.status, out.text).toBe(415)
    expect(out.body.error).toMatch(/Unsupported media type "text\/plain"/)
    expect((await send(app, 'GET', '/auth/me', { token: session.access_token })).status).toBe(200)

    const retried = await send(app, 'POST', '/auth/logout', {
      token: session.access_token,
      json: { refresh_token: session.refresh_token },
    })
    expect(retried.status).toBe(204)
    const refreshed = await send(app, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: session.refresh_token },
    })
    expect(refreshed.status).toBe(401)
  })

  it('still logs out with an empty body of any type', async () => {
    const session = await rtLogin(app, 'ada@example.com', 'correct horse')
    const out = await send(app, 'POST', '/auth/logout', {
      token: session.access_token,
      body: '',
      type: 'text/plain',
    })
    expect(out.status).toBe(204)
  })
})

describe('expired refresh-token records', () => {
  it('are deleted by a later login, at most hourly (regression: kept forever, a row per rotation)', async () => {
    let clock = Date.now()
    const timed = createAuth({
      secret: SECRET,
      database: `sqlite:${join(tempDir('fw-audit3-purge-'), 'app.db')}`,
      production: false,
      now: () => clock,
    })
    const timedApp = await serveAuthApp(timed)
    try {
      const user = await createUser(timed, { email: 'old@example.com', name: 'O', password: 'pw' })
      const { refreshTokens } = await timed.database()
      const expire = async (token: string): Promise<string> => {
        await refreshTokens.insert({
          userId: user.id,
          tokenHash: hashRefreshToken(token),
          familyId: token.slice(0, 8),
          expiresAt: formatDateTime(clock - 1000),
        })
        return hashRefreshToken(token)
      }
      const first = await expire('a'.repeat(64))
      await rtLogin(timedApp, 'old@example.com', 'pw')
      expect(await refreshTokens.find(first)).toBeNull()

      const second = await expire('b'.repeat(64))
      await rtLogin(timedApp, 'old@example.com', 'pw')
      expect(await refreshTokens.find(second)).not.toBeNull()
      clock += 3_600_000
      await rtLogin(timedApp, 'old@example.com', 'pw')
      expect(await refreshTokens.find(second)).toBeNull()
    } finally {
      await timedApp.close()
      await timed.close()
    }
  })
})

const postgresUp = await reachable(POSTGRES_URL)

describe.runIf(postgresUp)('the recipe on PostgreSQL', () => {
  const prefix = uniquePrefix('audit3')
  const table = `${prefix}refresh_tokens`
  let pgAuth: Auth
  let pgApp: AuthApp
  let sql: pg.Client
  const email = `pg-${randomBytes(3).toString('hex')}@example.com`

  beforeAll(async () => {
    pgAuth = createAuth({
      secret: SECRET,
      database: POSTGRES_URL,
      tablePrefix: prefix,
      production: false,
    })
    pgApp = await serveAuthApp(pgAuth)
    await createUser(pgAuth, { email, name: 'Pg', password: 'correct horse' })
    sql = new pg.Client({ connectionString: POSTGRES_URL })
    await sql.connect()
  })

  afterAll(async () => {
    await pgApp.close()
    await pgAuth.close()
    await sql.query(`DROP TABLE IF EXISTS ${prefix}refresh_tokens, ${prefix}users`)
    await sql.end()
  })

  it('answers 401 / invalid_grant to an email holding a NUL (regression: 503 "user store is unavailable")', async () => {
    const login = await send(pgApp, 'POST', '/auth/login', {
      json: { email: `${email}\u0000`, password: 'correct horse' },
    })
    expect(login.status, login.text).toBe(401)
    expect(login.body.error).toBe('Invalid credentials')
    const oauth = await send(pgApp, 'POST', '/oauth/token', {
      json: { grant_type: 'password', username: '\u0000', password: 'correct horse' },
    })
    expect(oauth.status, oauth.text).toBe(400)
    expect(oauth.body.error).toBe('invalid_grant')
  })

  /**
   * Replays, on a connection of its own, what a concurrent /rt/auth/refresh of `current` does
   * (lock the row, mark it rotated, insert its successor), holding the lock until `during` is
   * blocked on it. Resolves to the reply to `during` and the successor's plain token.
   */
  async function rotateConcurrently(
    current: string,
    during: () => Promise<Reply>,
  ): Promise<{ reply: Reply; successor: string }> {
    await sql.query('BEGIN')
    const { rows } = await sql.query(
      `SELECT user_id, family_id FROM ${table} WHERE token = $1 FOR UPDATE`,
      [hashRefreshToken(current)],
    )
    const pending = during()
    await waitForLockWaiter()
    const successor = randomBytes(32).toString('hex')
    await sql.query(`UPDATE ${table} SET rotated_at = now() WHERE token = $1`, [
      hashRefreshToken(current),
    ])
    await sql.query(
      `INSERT INTO ${table} (user_id, token, expires_at, family_id) VALUES ($1, $2, $3::timestamp, $4)`,
      [
        rows[0].user_id,
        hashRefreshToken(successor),
        formatDateTime(Date.now() + 86_400_000),
        rows[0].family_id,
      ],
    )
    await sql.query('COMMIT')
    return { reply: await pending, successor }
  }

  /** Until a statement on our table waits for a row lock (the one held above). */
  async function waitForLockWaiter(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await new Promise<pg.QueryResult>((resolve, reject) => {
        const probe = new pg.Client({ connectionString: POSTGRES_URL })
        probe
          .connect()
          .then(() =>
            probe.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
              [`%${table}%`],
            ),
          )
          .then(resolve, reject)
          .finally(() => void probe.end())
      })
      if (rows.length > 0) return
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error('no statement waited for the row lock')
  }

  it('revokes a successor rotated while a reuse revoked the family (regression: it stayed live)', async () => {
    const first = await rtLogin(pgApp, email, 'correct horse')
    const rotated = await send(pgApp, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: first.refresh_token },
    })
    expect(rotated.status).toBe(200)
    const second = rotated.body.refresh_token as string
    // The thief's reuse of the first token arrives while the second is being rotated.
    const { reply, successor } = await rotateConcurrently(second, () =>
      send(pgApp, 'POST', '/rt/auth/refresh', { json: { refresh_token: first.refresh_token } }),
    )
    expect(reply.status).toBe(401)
    const late = await send(pgApp, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: successor },
    })
    expect(late.status, late.text).toBe(401)
  })

  it('revokes a successor rotated while a logout revoked the session (regression: it stayed live)', async () => {
    const session = await rtLogin(pgApp, email, 'correct horse')
    const { reply, successor } = await rotateConcurrently(session.refresh_token, () =>
      send(pgApp, 'POST', '/auth/logout', {
        token: session.access_token,
        json: { refresh_token: session.refresh_token },
      }),
    )
    expect(reply.status).toBe(204)
    const late = await send(pgApp, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: successor },
    })
    expect(late.status, late.text).toBe(401)
  })
})
