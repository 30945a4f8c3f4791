/**
 * Regressions of the second audit of the auth recipe, over real HTTP against a Kernel on a
 * compiled cache with a real SQLite store (PostgreSQL for the "store down" case): audiences,
 * Unicode normalisation of emails and passwords, bodies the endpoints cannot read, RFC 6749
 * errors of /oauth/token, an unreachable user store, and logout ending a refresh-token session.
 */
import * as argon2 from '@node-rs/argon2'
import BetterSqlite3 from 'better-sqlite3'
import { createHmac, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuth, createUser, type Auth } from '../../src/auth/auth.js'
import { TokenService } from '../../src/auth/jwt.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import { b64, SECRET, send, serveAuthApp, type AuthApp } from './support.js'

/** An HS256 token signed with SECRET from the given claims. */
function sign(claims: Record<string, unknown>): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
}

const claimsOf = (token: unknown): Record<string, unknown> =>
  JSON.parse(Buffer.from(String(token).split('.')[1]!, 'base64url').toString()) as Record<
    string,
    unknown
  >

let auth: Auth
let app: AuthApp
let dbPath: string
let ada: number

beforeAll(async () => {
  dbPath = join(tempDir('fw-audit2-'), 'app.db')
  auth = createAuth({ secret: SECRET, database: `sqlite:${dbPath}`, production: false })
  app = await serveAuthApp(auth)
  ada = (
    await createUser(auth, {
      email: 'ada@example.com',
      name: 'Ada',
      password: 'correct horse',
      roles: ['admin'],
    })
  ).id
})

afterAll(async () => {
  await app.close()
  await auth.close()
  cleanupTempDirs()
})

describe('audience (RFC 7519 4.1.3)', () => {
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: 'framework-app', iat: now, exp: now + 600 }

  it('refuses a token naming an audience when none is configured (regression: aud was ignored)', async () => {
    const other = await send(app, 'GET', '/auth/me', {
      token: sign({ ...claims, sub: ada, aud: 'billing' }),
    })
    expect(other.status).toBe(401)
    expect(other.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    expect(
      (await send(app, 'GET', '/auth/me', { token: sign({ ...claims, sub: ada }) })).status,
    ).toBe(200)
  })

  it('writes and requires the configured audience', async () => {
    const tokens = new TokenService({ secret: SECRET, audience: 'api' })
    const token = await tokens.issue(7, { aud: 'forged' })
    expect(claimsOf(token).aud).toBe('api')
    expect(await tokens.verify(token)).toMatchObject({ sub: 7, aud: 'api' })
    expect(await tokens.verify(sign({ ...claims, sub: 7 }))).toBeNull()
    expect(await tokens.verify(sign({ ...claims, sub: 7, aud: 'billing' }))).toBeNull()
    expect(await tokens.verify(sign({ ...claims, sub: 7, aud: ['billing', 'api'] }))).not.toBeNull()
  })
})

describe('Unicode normalisation of emails and passwords', () => {
  const composed = 'josé@example.com'.normalize('NFC')
  const decomposed = 'josé@example.com'.normalize('NFD')
  const password = 'pässwörd café'

  it('logs in with either form of an email and a password created in the other (regression: 401)', async () => {
    await createUser(auth, {
      email: decomposed,
      name: 'José',
      password: password.normalize('NFD'),
    })
    for (const [email, pw] of [
      [composed, password.normalize('NFC')],
      [decomposed, password.normalize('NFD')],
      [composed.toUpperCase(), password.normalize('NFC')],
    ] as const) {
      const reply = await send(app, 'POST', '/auth/login', { json: { email, password: pw } })
      expect(reply.status, `${email} / ${pw}`).toBe(200)
    }
  })

  it('refuses a second account whose email differs only in normalisation', async () => {
    await expect(
      createUser(auth, { email: composed, name: 'Impostor', password: 'another password' }),
    ).rejects.toThrow(/already exists/)
  })

  it('still logs in a user stored before normalisation, and rehashes the password', async () => {
    // What fw stored before: the email only lowercased, the password hashed as typed (NFD).
    const legacyEmail = 'renée@example.com'.normalize('NFD')
    const legacyPassword = 'crème brûlée'.normalize('NFD')
    const { users } = await auth.database()
    const { id } = await users.create({
      email: 'placeholder@example.com',
      name: 'Renée',
      passwordHash: await argon2.hash(legacyPassword),
    })
    const raw = new BetterSqlite3(dbPath)
    raw.prepare('UPDATE users SET email = ? WHERE id = ?').run(legacyEmail, id)
    raw.close()

    const first = await send(app, 'POST', '/auth/login', {
      json: { email: legacyEmail, password: legacyPassword },
    })
    expect(first.status).toBe(200)
    const rehashed = (await users.findById(id))!.password_hash
    expect(await argon2.verify(rehashed, legacyPassword.normalize('NFC'))).toBe(true)
    const composedLogin = await send(app, 'POST', '/auth/login', {
      json: { email: legacyEmail.normalize('NFC'), password: legacyPassword.normalize('NFC') },
    })
    expect(composedLogin.status).toBe(200)
  })
})

describe('bodies the endpoints cannot read', () => {
  const credentials = JSON.stringify({ email: 'ada@example.com', password: 'correct horse' })

  it('answers 415 {error} for credentials sent as text/plain (regression: 400 "required")', async () => {
    for (const path of ['/auth/login', '/rt/auth/login', '/auth/refresh', '/rt/auth/refresh']) {
      const reply = await send(app, 'POST', path, { body: credentials, type: 'text/plain' })
      expect(reply.status, path).toBe(415)
      expect(reply.body.error).toMatch(/Unsupported media type "text\/plain"/)
    }
    const untyped = await send(app, 'POST', '/auth/login', { body: credentials })
    expect(untyped.status).toBe(415)
    expect(untyped.body.error).toMatch(/"none"/)
  })

  it('still reads JSON, form and empty bodies as before', async () => {
    expect(
      (
        await send(app, 'POST', '/auth/login', {
          body: credentials,
          type: 'application/json; charset=utf-8',
        })
      ).status,
    ).toBe(200)
    const form = 'email=ada%40example.com&password=correct+horse'
    expect(
      (
        await send(app, 'POST', '/auth/login', {
          body: form,
          type: 'application/x-www-form-urlencoded',
        })
      ).status,
    ).toBe(200)
    expect((await send(app, 'POST', '/auth/login')).status).toBe(400)
  })
})

describe('POST /oauth/token errors are RFC 6749 errors', () => {
  const oauth = (body: string, type = 'application/x-www-form-urlencoded') =>
    send(app, 'POST', '/oauth/token', { body, type })

  it('answers 400 invalid_request for malformed JSON and an unreadable body type (regression: {error: "Malformed JSON body", code})', async () => {
    for (const [body, type] of [
      ['{"grant_type":', 'application/json'],
      ['grant_type=password', 'text/plain'],
    ] as const) {
      const reply = await oauth(body, type)
      expect(reply.status, type).toBe(400)
      expect(reply.body).toEqual({
        error: 'invalid_request',
        error_description: expect.any(String),
      })
      expect(reply.headers['cache-control']).toBe('no-store')
    }
  })

  it('answers 413 invalid_request for a body over the limit, and keeps serving', async () => {
    const huge = JSON.stringify({ grant_type: 'password', pad: 'x'.repeat(1024 * 1024) })
    const reply = await oauth(huge, 'application/json')
    expect(reply.status).toBe(413)
    expect(reply.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) })
    expect((await oauth('grant_type=nope')).body.error).toBe('unsupported_grant_type')
  })

  it('answers 400 invalid_request for a repeated parameter (regression: the last one won)', async () => {
    const good = 'username=ada%40example.com&password=correct+horse'
    for (const body of [
      `grant_type=password&grant_type=client_credentials&${good}`,
      `grant_type=password&${good}&password=other`,
      `grant_type=password&${good}&username=bob%40example.com`,
    ]) {
      const reply = await oauth(body)
      expect(reply.status, body).toBe(400)
      expect(reply.body).toEqual({
        error: 'invalid_request',
        error_description: expect.stringMatching(/is repeated/),
      })
    }
    expect((await oauth(`grant_type=password&${good}`)).status).toBe(200)
  })
})

describe('an unreachable user store', () => {
  let down: Auth
  let downApp: AuthApp

  beforeAll(async () => {
    // A real PostgreSQL URL on a port nothing listens on, with a password that must not leak.
    down = createAuth({
      secret: SECRET,
      database: 'postgres://postgres:hunter2-secret@127.0.0.1:1/test',
      production: false,
    })
    downApp = await serveAuthApp(down)
  })

  afterAll(async () => {
    await downApp.close()
    await down.close()
  })

  it('answers 503 (regression: 500), and never the URL, its password or a stack', async () => {
    const now = Math.floor(Date.now() / 1000)
    const token = sign({ iss: 'framework-app', iat: now, exp: now + 600, sub: 1 })
    const replies = [
      await send(downApp, 'POST', '/auth/login', { json: { email: 'a@b.co', password: 'x' } }),
      await send(downApp, 'POST', '/rt/auth/refresh', { json: { refresh_token: 'a'.repeat(64) } }),
      await send(downApp, 'GET', '/auth/me', { token }),
      await send(downApp, 'POST', '/oauth/token', {
        json: { grant_type: 'password', username: 'a@b.co', password: 'x' },
      }),
    ]
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(503)
      expect(reply.body.error).toBe('Service Unavailable')
      expect(reply.text).not.toMatch(/hunter2|postgres:|ECONNREFUSED|at \w+ \(/)
    }
  })
})

describe('POST /auth/logout with the refresh-token variation', () => {
  async function rtLogin(): Promise<{ access_token: string; refresh_token: string }> {
    const reply = await send(app, 'POST', '/rt/auth/login', {
      json: { email: 'ada@example.com', password: 'correct horse' },
    })
    expect(reply.status).toBe(200)
    return reply.body as { access_token: string; refresh_token: string }
  }

  it('revokes the refresh token sent along (regression: it kept minting access tokens)', async () => {
    const session = await rtLogin()
    const rotated = await send(app, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: session.refresh_token },
    })
    expect(rotated.status).toBe(200)
    const current = rotated.body as { access_token: string; refresh_token: string }
    const out = await send(app, 'POST', '/auth/logout', {
      token: current.access_token,
      json: { refresh_token: current.refresh_token },
    })
    expect(out.status).toBe(204)
    const after = await send(app, 'POST', '/rt/auth/refresh', {
      json: { refresh_token: current.refresh_token },
    })
    expect(after.status).toBe(401)
    expect((await send(app, 'GET', '/auth/me', { token: current.access_token })).status).toBe(401)
  })

  it("leaves another user's refresh token and the user's other sessions alone", async () => {
    const bob = await createUser(auth, {
      email: `bob-${randomBytes(3).toString('hex')}@example.com`,
      name: 'Bob',
      password: 'battery staple',
    })
    const bobSession = await send(app, 'POST', '/rt/auth/login', {
      json: { email: bob.email, password: 'battery staple' },
    })
    const mine = await rtLogin()
    const other = await rtLogin()
    const out = await send(app, 'POST', '/auth/logout', {
      token: mine.access_token,
      json: { refresh_token: bobSession.body.refresh_token },
    })
    expect(out.status).toBe(204)
    for (const refresh_token of [
      bobSession.body.refresh_token,
      other.refresh_token,
      mine.refresh_token,
    ]) {
      const reply = await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token } })
      expect(reply.status).toBe(200)
    }
  })
})
