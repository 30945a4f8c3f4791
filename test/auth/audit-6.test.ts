/**
 * Regressions of the sixth audit of the auth recipe, over real HTTP against a Kernel on a compiled
 * cache, with real SQLite and PostgreSQL stores: revocations (logout, refresh-once) that a restart
 * forgot, and a PostgreSQL that accepts connections but never answers.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import * as argon2 from '@node-rs/argon2'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { createUser } from '../../src/auth/auth.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import {
  POSTGRES_URL,
  reachable,
  send,
  startAuthRun as start,
  type AuthRun as Run,
  uniquePrefix,
  type AuthApp,
} from './support.js'

const PASSWORD = 'correct horse battery'

async function login(app: AuthApp, email: string): Promise<string> {
  const reply = await send(app, 'POST', '/auth/login', { json: { email, password: PASSWORD } })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.token as string
}

afterAll(() => cleanupTempDirs())

describe('revocations outlive a restart (no REDIS_URL, SQLite store)', () => {
  it('keeps a logged-out token revoked after a restart (regression: 200 again)', async () => {
    const database = `sqlite:${join(tempDir('fw-audit6-'), 'app.db')}`
    const first = await start({ database })
    await createUser(first.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
    const token = await login(first.app, 'ada@example.com')
    expect((await send(first.app, 'POST', '/auth/logout', { token })).status).toBe(204)
    await first.stop()

    const second = await start({ database })
    try {
      const me = await send(second.app, 'GET', '/auth/me', { token })
      expect(me.status, me.text).toBe(401)
      expect(me.body.error).toBe('Token revoked')
      expect(me.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
      // A fresh login is unaffected.
      const fresh = await login(second.app, 'ada@example.com')
      expect((await send(second.app, 'GET', '/auth/me', { token: fresh })).status).toBe(200)
    } finally {
      await second.stop()
    }
    const db = new BetterSqlite3(database.slice('sqlite:'.length), { readonly: true })
    const rows = db.prepare('SELECT jti, expires_at FROM revoked_tokens').all()
    db.close()
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      jti: string
      exp: number
    }
    expect(rows).toEqual([{ jti: payload.jti, expires_at: payload.exp }])
  })

  it('refreshes a token once, also across a restart (regression: once per run)', async () => {
    const database = `sqlite:${join(tempDir('fw-audit6-'), 'app.db')}`
    // 3400 s after login the login token has 200 s left: eligible for /auth/refresh.
    const later = () => Date.now() + 3_400_000
    const first = await start({ database })
    await createUser(first.auth, { email: 'bob@example.com', name: 'Bob', password: PASSWORD })
    const token = await login(first.app, 'bob@example.com')
    await first.stop()

    const second = await start({ database, now: later })
    const refreshed = await send(second.app, 'POST', '/auth/refresh', { json: { token } })
    expect(refreshed.status, refreshed.text).toBe(200)
    await second.stop()

    const third = await start({ database, now: later })
    try {
      const again = await send(third.app, 'POST', '/auth/refresh', { json: { token } })
      expect(again.status, again.text).toBe(400)
      expect(again.body.error).toMatch(/not eligible for refresh/)
    } finally {
      await third.stop()
    }
  })
})

const pgUp = await reachable(POSTGRES_URL)

describe.runIf(pgUp)('revocations outlive a restart (no REDIS_URL, PostgreSQL store)', () => {
  const tablePrefix = uniquePrefix('audit6')

  afterAll(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    for (const table of ['refresh_tokens', 'revoked_tokens', 'users'])
      await client.query(`DROP TABLE IF EXISTS ${tablePrefix}${table}`)
    await client.end()
  })

  it('keeps a logout after a restart, and refreshes a token once across two servers', async () => {
    const options = { database: POSTGRES_URL, tablePrefix }
    const first = await start(options)
    await createUser(first.auth, { email: 'cy@example.com', name: 'Cy', password: PASSWORD })
    const token = await login(first.app, 'cy@example.com')
    const other = await login(first.app, 'cy@example.com')
    expect((await send(first.app, 'POST', '/auth/logout', { token })).status).toBe(204)
    await first.stop()

    const later = () => Date.now() + 3_400_000
    const [a, b] = [
      await start({ ...options, now: later }),
      await start({ ...options, now: later }),
    ]
    try {
      const me = await send(a.app, 'GET', '/auth/me', { token })
      expect(me.status, me.text).toBe(401)
      expect(me.body.error).toBe('Token revoked')
      // Two servers on one database (no Redis): the second refresh of one token is refused.
      expect((await send(a.app, 'POST', '/auth/refresh', { json: { token: other } })).status).toBe(
        200,
      )
      const again = await send(b.app, 'POST', '/auth/refresh', { json: { token: other } })
      expect(again.status, again.text).toBe(400)
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})

describe('a PostgreSQL server that accepts connections but never answers', () => {
  const sockets = new Set<Socket>()
  let silent: Server

  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => silent.close(resolve))
  })

  it('answers 503 within the connection timeout (regression: the request hung)', async () => {
    silent = createServer((socket) => {
      sockets.add(socket)
      socket.on('data', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as AddressInfo).port
    const run = await start({ database: `postgres://postgres:hunter2@127.0.0.1:${port}/test` })
    try {
      const reply = await send(run.app, 'POST', '/auth/login', {
        json: { email: 'a@example.com', password: PASSWORD },
      })
      expect(reply.status, reply.text).toBe(503)
      expect(reply.text).not.toMatch(/hunter2|postgres:|timeout|at \w+ \(/)
    } finally {
      await run.stop()
    }
  }, 20_000)
})

describe('passwords are RFC 8265 OpaqueString: a non-ASCII space is a space', () => {
  const nbsp = 'correct\u00a0horse\u00a0battery'
  let run: Run

  afterAll(async () => run?.stop())

  it('logs in with either space whichever was used at creation (regression: 401)', async () => {
    run = await start({ database: `sqlite:${join(tempDir('fw-audit6-'), 'app.db')}` })
    await createUser(run.auth, { email: 'nb@example.com', name: 'Nb', password: nbsp })
    await createUser(run.auth, { email: 'sp@example.com', name: 'Sp', password: PASSWORD })
    for (const [email, password] of [
      ['nb@example.com', PASSWORD],
      ['sp@example.com', nbsp],
      ['sp@example.com', 'correct\u2009horse\u3000battery'],
    ]) {
      const reply = await send(run.app, 'POST', '/auth/login', { json: { email, password } })
      expect(reply.status, `${email} ${JSON.stringify(password)} ${reply.text}`).toBe(200)
    }
    const wrong = await send(run.app, 'POST', '/auth/login', {
      json: { email: 'sp@example.com', password: 'correcthorse battery' },
    })
    expect(wrong.status).toBe(401)
  })

  it('still logs in a user whose hash holds the U+00A0, and replaces the hash', async () => {
    const { users } = await run.auth.database()
    const legacy = await argon2.hash(nbsp)
    const user = await users.create({ email: 'old@example.com', name: 'Old', passwordHash: legacy })
    const reply = await send(run.app, 'POST', '/auth/login', {
      json: { email: 'old@example.com', password: nbsp },
    })
    expect(reply.status, reply.text).toBe(200)
    const stored = (await users.findById(user.id))!.password_hash
    expect(stored).not.toBe(legacy)
    // The new hash is of the mapped form: the ASCII space opens it now.
    const ascii = await send(run.app, 'POST', '/auth/login', {
      json: { email: 'old@example.com', password: PASSWORD },
    })
    expect(ascii.status, ascii.text).toBe(200)
  })
})

describe('GET /admin/users without the role', () => {
  it('answers 403 with WWW-Authenticate: Bearer error="insufficient_scope" (RFC 6750 3, 3.1)', async () => {
    const run = await start({ database: `sqlite:${join(tempDir('fw-audit6-'), 'app.db')}` })
    try {
      await createUser(run.auth, { email: 'u@example.com', name: 'U', password: PASSWORD })
      const token = await login(run.app, 'u@example.com')
      const reply = await send(run.app, 'GET', '/admin/users', { token })
      expect(reply.status).toBe(403)
      expect(reply.body.error).toBe('Forbidden')
      expect(reply.headers['www-authenticate']).toBe('Bearer error="insufficient_scope"')
    } finally {
      await run.stop()
    }
  })
})
