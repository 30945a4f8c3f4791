/**
 * Regressions of the nineteenth audit of the auth recipe, over real HTTP against a Kernel on a
 * compiled cache, with real SQLite, PostgreSQL and Redis: a refresh-token theft that left the
 * family's access tokens working until they expired (also on tables from before the fix).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser, type AuthOptions } from '../../src/auth/auth.js'
import { hashPassword } from '../../src/auth/password.js'
import { hashRefreshToken } from '../../src/auth/refresh-tokens.js'
import { connectRedisRevocations } from '../../src/auth/revocation.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import { deleteKeys } from '../throttle/support.js'
import {
  POSTGRES_URL,
  reachable,
  REDIS_URL,
  send,
  startAuthRun as start,
  type AuthRun as Run,
  pgTables,
  type AuthApp,
  type Reply,
} from './support.js'

const PASSWORD = 'correct horse battery'
const REDIS_PREFIX = `fw:test:audit19:${randomUUID()}:`
const [pgUp, redisUp] = await Promise.all([reachable(POSTGRES_URL), reachable(REDIS_URL)])
const tables = pgTables('audit19')

afterAll(async () => {
  cleanupTempDirs()
  if (redisUp) await deleteKeys(REDIS_URL, REDIS_PREFIX)
  await tables.drop()
})

const me = (app: AuthApp, token: string): Promise<Reply> => send(app, 'GET', '/auth/me', { token })

const rtRefresh = (app: AuthApp, refreshToken: string): Promise<Reply> =>
  send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: refreshToken } })

async function rtLogin(app: AuthApp, email: string): Promise<{ access: string; refresh: string }> {
  const reply = await send(app, 'POST', '/rt/auth/login', { json: { email, password: PASSWORD } })
  expect(reply.status, reply.text).toBe(200)
  return { access: reply.body.access_token as string, refresh: reply.body.refresh_token as string }
}

function claimsOf(token: string): { jti: string; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
    jti: string
    exp: number
  }
}

async function expectRevoked(app: AuthApp, token: string): Promise<void> {
  const reply = await me(app, token)
  expect(reply.status, reply.text).toBe(401)
  expect(reply.body.error).toBe('Token revoked')
  expect(reply.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
}

/**
 * A login whose refresh token is stolen: the owner refreshes, the thief presents the used token.
 * Resolves the access tokens of the stolen family, for the caller's further checks.
 */
async function theft(app: AuthApp, email: string): Promise<{ latest: string; first: string }> {
  const stolen = await rtLogin(app, email)
  const other = await rtLogin(app, email)
  const rotated = await rtRefresh(app, stolen.refresh)
  expect(rotated.status, rotated.text).toBe(200)
  const latest = rotated.body.access_token as string
  expect((await me(app, latest)).status).toBe(200)

  const reuse = await rtRefresh(app, stolen.refresh)
  expect(reuse.status, reuse.text).toBe(401)
  expect(reuse.body.error).toBe('Invalid or expired refresh token')
  // The access token of the family's latest refresh, and of its login: revoked (regression: 200).
  await expectRevoked(app, latest)
  await expectRevoked(app, stolen.access)
  expect((await rtRefresh(app, rotated.body.refresh_token as string)).status).toBe(401)

  // Another login's family is untouched: its access token works, and it still rotates.
  expect((await me(app, other.access)).status).toBe(200)
  const next = await rtRefresh(app, other.refresh)
  expect(next.status, next.text).toBe(200)
  expect((await me(app, next.body.access_token as string)).status).toBe(200)
  return { latest, first: stolen.access }
}

describe('a refresh-token theft revokes the access tokens of the family', () => {
  it('on the in-memory revocation list (SQLite store)', async () => {
    const server = await start({ database: 'sqlite::memory:' })
    try {
      await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
      await theft(server.app, 'ada@example.com')
    } finally {
      await server.stop()
    }
  })

  it.runIf(redisUp)('on the Redis revocation list, each until its exp', async () => {
    const server = await start({
      database: 'sqlite::memory:',
      revocations: await connectRedisRevocations(REDIS_URL, { prefix: REDIS_PREFIX }),
    })
    const redis = new Redis(REDIS_URL)
    try {
      await createUser(server.auth, { email: 'bob@example.com', name: 'Bob', password: PASSWORD })
      const { latest } = await theft(server.app, 'bob@example.com')
      // Kept for the token's remaining lifetime (900 s at most) and 30 s for the clocks of other
      // hosts, not longer.
      const ttl = await redis.ttl(REDIS_PREFIX + claimsOf(latest).jti)
      expect(ttl).toBeGreaterThan(830)
      expect(ttl).toBeLessThanOrEqual(930)
    } finally {
      redis.disconnect()
      await server.stop()
    }
  })

  it.runIf(pgUp)('on the PostgreSQL store, also after a restart', async () => {
    const options = { database: POSTGRES_URL, tablePrefix: tables.next() }
    const first = await start(options)
    let latest: string
    try {
      await createUser(first.auth, { email: 'cy@example.com', name: 'Cy', password: PASSWORD })
      ;({ latest } = await theft(first.app, 'cy@example.com'))
    } finally {
      await first.stop()
    }
    // The revocation was written through to the database, and read back by the next process.
    const second = await start(options)
    try {
      await expectRevoked(second.app, latest)
    } finally {
      await second.stop()
    }
  })
})

/** The tables as fw created them before access tokens were recorded, with a user and a session. */
function tablesBefore(p: string, postgres: boolean, passwordHash: string, token: string): string {
  const [id, roles, time, bool, no] = postgres
    ? [
        'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY',
        'JSONB',
        'TIMESTAMP',
        'BOOLEAN',
        'false',
      ]
    : ['INTEGER PRIMARY KEY AUTOINCREMENT', 'TEXT', 'TEXT', 'INTEGER', '0']
  return `
    CREATE TABLE ${p}users (id ${id}, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
      password_hash TEXT NOT NULL, roles ${roles} NOT NULL DEFAULT '[]');
    CREATE TABLE ${p}refresh_tokens (id ${id},
      user_id BIGINT NOT NULL REFERENCES ${p}users(id) ON DELETE CASCADE, token TEXT NOT NULL UNIQUE,
      expires_at ${time} NOT NULL, family_id TEXT NOT NULL DEFAULT '', rotated_at ${time},
      revoked ${bool} NOT NULL DEFAULT ${no});
    INSERT INTO ${p}users (id, email, name, password_hash) VALUES (7, 'old@example.com', 'Old', '${passwordHash}');
    INSERT INTO ${p}refresh_tokens (user_id, token, expires_at) VALUES (7, '${hashRefreshToken(token)}', '2999-01-01 00:00:00');`
}

/** On tables from before: the old session still rotates, and its theft revokes access tokens. */
async function theftOnOldTables(options: AuthOptions, token: string): Promise<void> {
  const server = await start(options)
  try {
    const rotated = await rtRefresh(server.app, token)
    expect(rotated.status, rotated.text).toBe(200)
    const latest = rotated.body.access_token as string
    expect((await rtRefresh(server.app, token)).status).toBe(401)
    await expectRevoked(server.app, latest)
    await theft(server.app, 'old@example.com')
  } finally {
    await server.stop()
  }
}

describe('tables from before the access tokens were recorded are migrated on open', () => {
  it('SQLite', async () => {
    const file = join(tempDir('fw-audit19-'), 'app.db')
    const token = randomBytes(32).toString('hex')
    const legacy = new BetterSqlite3(file)
    legacy.exec(tablesBefore('', false, await hashPassword(PASSWORD), token))
    legacy.close()

    await theftOnOldTables({ database: `sqlite:${file}` }, token)
    const db = new BetterSqlite3(file, { readonly: true })
    const columns = db.prepare('PRAGMA table_info(refresh_tokens)').all() as Array<{ name: string }>
    db.close()
    expect(columns.map((c) => c.name)).toEqual(
      expect.arrayContaining(['access_jti', 'access_expires_at']),
    )
  })

  it.runIf(pgUp)('PostgreSQL', async () => {
    const tablePrefix = tables.next()
    const token = randomBytes(32).toString('hex')
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    try {
      await client.query(tablesBefore(tablePrefix, true, await hashPassword(PASSWORD), token))
      await theftOnOldTables({ database: POSTGRES_URL, tablePrefix }, token)
      const { rows } = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = $1`,
        [`${tablePrefix}refresh_tokens`],
      )
      expect(rows.map((r: { column_name: string }) => r.column_name)).toEqual(
        expect.arrayContaining(['access_jti', 'access_expires_at']),
      )
    } finally {
      await client.end()
    }
  })
})

describe('every token the recipe issues (now minted with its jti and exp)', () => {
  let clock = Date.now()
  let server: Run

  beforeAll(async () => {
    server = await start({ database: 'sqlite::memory:', now: () => clock })
    await createUser(server.auth, { email: 'dee@example.com', name: 'Dee', password: PASSWORD })
  })
  afterAll(() => server.stop())

  it('verifies on /auth/me: login, refresh, /rt login and refresh, /oauth/token', async () => {
    const { app } = server
    const credentials = { email: 'dee@example.com', password: PASSWORD }
    const login = (await send(app, 'POST', '/auth/login', { json: credentials })).body
    const rt = await rtLogin(app, 'dee@example.com')
    const rotated = (await rtRefresh(app, rt.refresh)).body
    const oauth = await send(app, 'POST', '/oauth/token', {
      body: `grant_type=password&username=dee%40example.com&password=${encodeURIComponent(PASSWORD)}`,
      type: 'application/x-www-form-urlencoded',
    })
    const issued = [
      login.token,
      rt.access,
      rotated.access_token,
      oauth.body.access_token,
    ] as string[]
    for (const token of issued) {
      expect(claimsOf(token)).toMatchObject({ iss: 'framework-app', jti: expect.any(String) })
      const reply = await me(app, token)
      expect(reply.status, reply.text).toBe(200)
    }
    clock += 3_400_000 // the /auth/login token has 200 s left: eligible for /auth/refresh
    const refreshed = await send(app, 'POST', '/auth/refresh', { json: { token: login.token } })
    expect(refreshed.status, refreshed.text).toBe(200)
    expect((await me(app, refreshed.body.token as string)).status).toBe(200)
    clock -= 3_400_000
  })
})
