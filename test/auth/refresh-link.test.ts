/**
 * An access token of a refresh-token session (/rt) exchanged at POST /auth/refresh: the token it
 * gets in return belongs to the same family, so a theft of that family revokes it too (it used to
 * stay valid for its hour, and could be exchanged again, every hour, after the theft), and lives
 * as long as the one it replaced (900 s; it came back as a 3600 s one).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createUser, type AuthOptions } from '../../src/auth/auth.js'
import { MemoryRevocationList, type RevocationList } from '../../src/auth/revocation.js'
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
const tables = pgTables('rtlink')

afterAll(async () => {
  await tables.drop()
})

const me = (app: AuthApp, token: string): Promise<Reply> => send(app, 'GET', '/auth/me', { token })
const rtRefresh = (app: AuthApp, refreshToken: string): Promise<Reply> =>
  send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: refreshToken } })

/** exp - iat of a JWT, in seconds. */
const lifetimeOf = (token: string): number => {
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
    iat: number
    exp: number
  }
  return claims.exp - claims.iat
}

async function refresh(app: AuthApp, token: string): Promise<string> {
  const reply = await send(app, 'POST', '/auth/refresh', { json: { token } })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.token as string
}

async function scenario(options: AuthOptions): Promise<void> {
  let clock = Date.now()
  const server = await start({ ...options, now: () => clock })
  const { app } = server
  try {
    await createUser(server.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
    const credentials = { json: { email: 'ada@example.com', password: PASSWORD } }
    const session = (await send(app, 'POST', '/rt/auth/login', credentials)).body

    clock += 700_000 // the /rt access token (900 s) has 200 s left: eligible for /auth/refresh
    const plain = (await send(app, 'POST', '/auth/login', credentials)).body.token as string
    const exchanged = await refresh(app, session.access_token as string)
    // It lives as long as the token it replaced, 900 s (it came back as a 3600 s one).
    expect(lifetimeOf(exchanged)).toBe(900)
    clock += 700_000 // and its successor in turn
    const again = await refresh(app, exchanged)
    expect(lifetimeOf(again)).toBe(900)
    expect((await me(app, again)).status).toBe(200)

    // The owner rotates the refresh token; a thief presents the used one: theft.
    const rotated = await rtRefresh(app, session.refresh_token as string)
    expect(rotated.status, rotated.text).toBe(200)
    expect((await rtRefresh(app, session.refresh_token as string)).status).toBe(401)

    const revoked = await me(app, again)
    expect(revoked.status, revoked.text).toBe(401)
    expect(revoked.body.error).toBe('Token revoked')
    const reply = await send(app, 'POST', '/auth/refresh', { json: { token: again } })
    expect(reply.status, reply.text).toBe(400)
    // A token of no refresh-token session is not touched, and keeps its hour.
    clock += 2_700_000 // the plain token (3600 s) has 200 s left
    const ofPlain = await refresh(app, plain)
    expect(lifetimeOf(ofPlain)).toBe(3600)
    expect((await me(app, ofPlain)).status).toBe(200)
  } finally {
    await server.stop()
  }
}

describe('a token exchanged at /auth/refresh stays in its refresh-token family', () => {
  it('SQLite', () => scenario({ database: 'sqlite::memory:' }))

  it.runIf(pgUp)('PostgreSQL', () => {
    const tablePrefix = tables.next()
    return scenario({ database: POSTGRES_URL, tablePrefix })
  })
})

/** A revocation list whose writes fail while `down` is set (a Redis outage, say). */
class FlakyRevocations implements RevocationList {
  down = false
  readonly #inner: MemoryRevocationList
  constructor(now: () => number) {
    this.#inner = new MemoryRevocationList({ now })
  }
  revoke(jti: string, expiresAt: number): Promise<boolean> {
    if (this.down) return Promise.reject(new Error('revocation list unreachable'))
    return this.#inner.revoke(jti, expiresAt)
  }
  isRevoked(jti: string): Promise<boolean> {
    return this.#inner.isRevoked(jti)
  }
}

async function afterFailedTheft(options: AuthOptions): Promise<void> {
  let clock = Date.now()
  const revocations = new FlakyRevocations(() => clock)
  const server = await start({ ...options, revocations, now: () => clock })
  const { app } = server
  try {
    await createUser(server.auth, { email: 'bo@example.com', name: 'Bo', password: PASSWORD })
    const credentials = { json: { email: 'bo@example.com', password: PASSWORD } }
    const session = (await send(app, 'POST', '/rt/auth/login', credentials)).body
    const rotated = (await rtRefresh(app, session.refresh_token as string)).body
    // The theft is detected and the family revoked, but its access tokens could not be listed.
    revocations.down = true
    expect((await rtRefresh(app, session.refresh_token as string)).status).toBe(503)
    revocations.down = false

    clock += 700_000 // both access tokens now have 200 s left
    for (const token of [session.access_token, rotated.access_token] as string[]) {
      const reply = await send(app, 'POST', '/auth/refresh', { json: { token } })
      // Regression: 200, a token of the stolen session that nothing would revoke.
      expect(reply.status, reply.text).toBe(400)
    }
  } finally {
    await server.stop()
  }
}

describe('/auth/refresh of a token whose refresh-token family is revoked', () => {
  it('SQLite', () => afterFailedTheft({ database: 'sqlite::memory:' }))

  it.runIf(pgUp)('PostgreSQL', () => {
    const tablePrefix = tables.next()
    return afterFailedTheft({ database: POSTGRES_URL, tablePrefix })
  })
})
