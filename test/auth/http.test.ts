/**
 * The recipe end to end over real HTTP: a Kernel booted on a compiled cache with authRoutes, a
 * SQLite user store, and every status of the spec's error table for these endpoints.
 */
import * as bcrypt from '@node-rs/bcrypt'
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuth, createUser, type Auth } from '../../src/auth/auth.js'
import { TokenService } from '../../src/auth/jwt.js'
import { hashRefreshToken } from '../../src/auth/refresh-tokens.js'
import { cleanupTempDirs } from '../support/compile.js'
import { SECRET, serveAuthApp, type AuthApp } from './support.js'

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

let auth: Auth
let app: AuthApp
let base: string
const ids: Record<string, number> = {}

beforeAll(async () => {
  auth = createAuth({ secret: SECRET, database: 'sqlite::memory:', production: false })
  ids.ada = (
    await createUser(auth, {
      email: 'ada@example.com',
      name: 'Ada',
      password: 'correct horse',
      roles: ['admin'],
    })
  ).id
  ids.bob = (
    await createUser(auth, { email: 'bob@example.com', name: 'Bob', password: 'battery staple' })
  ).id
  const { users } = await auth.database()
  const php = (await bcrypt.hash('from php 7', 4)).replace(/^\$2[aby]\$/, '$2y$')
  ids.php = (await users.create({ email: 'php@example.com', name: 'Legacy', passwordHash: php })).id
  ids.broken = (
    await users.create({
      email: 'broken@example.com',
      name: 'Broken',
      passwordHash: '$2y$10$not-a-hash',
    })
  ).id
  app = await serveAuthApp(auth)
  base = app.base
})

afterAll(async () => {
  await app.close()
  await auth.close()
  cleanupTempDirs()
})

/** Sends a request; `headers` may repeat a name (raw pairs). */
function send(
  method: string,
  path: string,
  options: { json?: unknown; form?: string; headers?: [string, string][] } = {},
): Promise<Reply> {
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.form
  const type = options.json !== undefined ? 'application/json' : 'application/x-www-form-urlencoded'
  // Raw header pairs (so a name can repeat); Node then adds neither Host nor Content-Length.
  const framing = [
    ['host', '127.0.0.1'],
    ['content-length', String(Buffer.byteLength(body ?? ''))],
  ]
  const raw = [
    ...framing,
    ...(body === undefined ? [] : [['content-type', type]]),
    ...(options.headers ?? []),
  ].flat()
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers: raw }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
        }),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

const bearer = (token: unknown): [string, string][] => [
  ['authorization', `Bearer ${String(token)}`],
]
const claimsOf = (token: unknown): Record<string, unknown> =>
  JSON.parse(Buffer.from(String(token).split('.')[1]!, 'base64url').toString()) as Record<
    string,
    unknown
  >

async function login(email = 'ada@example.com', password = 'correct horse'): Promise<string> {
  const reply = await send('POST', '/auth/login', { json: { email, password } })
  expect(reply.status).toBe(200)
  return reply.body.token as string
}

describe('POST /auth/login', () => {
  it('answers 200 {token, user} with a token carrying email, name, roles and jti', async () => {
    const reply = await send('POST', '/auth/login', {
      json: { email: 'ada@example.com', password: 'correct horse' },
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      token: expect.any(String),
      user: { id: ids.ada, email: 'ada@example.com', name: 'Ada' },
    })
    expect(reply.headers['cache-control']).toBe('no-store')
    const claims = claimsOf(reply.body.token)
    expect(claims).toMatchObject({
      sub: ids.ada,
      iss: 'framework-app',
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
    })
    expect(claims.jti).toMatch(/^[0-9a-f]{32}$/)
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600)
    expect(JSON.stringify(reply.body)).not.toContain('password')
  })

  it('leaves roles out for users without roles, and reads form bodies too', async () => {
    const reply = await send('POST', '/auth/login', {
      form: 'email=bob%40example.com&password=battery+staple',
    })
    expect(reply.status).toBe(200)
    expect(claimsOf(reply.body.token).roles).toBeUndefined()
  })

  it.each([
    ['no body', undefined],
    ['no password', { email: 'ada@example.com' }],
    ['no email', { password: 'correct horse' }],
    ['empty strings', { email: '', password: '' }],
    ['a non-string password', { email: 'ada@example.com', password: ['correct horse'] }],
  ])('answers 400 for %s', async (_what, json) => {
    const reply = await send('POST', '/auth/login', json === undefined ? {} : { json })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('Email and password are required')
  })

  it('answers 401 with one message for an unknown user, a wrong password and a broken stored hash', async () => {
    const replies = await Promise.all([
      send('POST', '/auth/login', {
        json: { email: 'nobody@example.com', password: 'correct horse' },
      }),
      send('POST', '/auth/login', { json: { email: 'ada@example.com', password: 'wrong horse' } }),
      send('POST', '/auth/login', { json: { email: 'broken@example.com', password: 'anything' } }),
      send('POST', '/auth/login', {
        json: { email: 'ada@example.com', password: 'x'.repeat(5000) },
      }),
    ])
    for (const reply of replies) {
      expect(reply.status).toBe(401)
      expect(reply.body.error).toBe('Invalid credentials')
      expect(reply.headers['www-authenticate']).toBe('Bearer')
    }
  })

  it('logs in a user migrated with a PHP $2y$ hash, and upgrades the hash to argon2id', async () => {
    const reply = await send('POST', '/auth/login', {
      json: { email: 'PHP@example.com', password: 'from php 7' },
    })
    expect(reply.status).toBe(200)
    const stored = await (await auth.database()).users.findById(ids.php!)
    expect(stored!.password_hash).toMatch(/^\$argon2id\$/)
    expect(
      (
        await send('POST', '/auth/login', {
          json: { email: 'php@example.com', password: 'from php 7' },
        })
      ).status,
    ).toBe(200)
  })
})

describe('GET /auth/me', () => {
  it('answers the user record, never the password hash', async () => {
    const reply = await send('GET', '/auth/me', { headers: bearer(await login()) })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      id: ids.ada,
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
    })
  })

  it('answers 401 with WWW-Authenticate for a missing header, a non-Bearer form and an invalid token', async () => {
    const token = await login()
    const missing = await send('GET', '/auth/me')
    expect(missing).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } })
    expect(missing.body.error).toMatch(/Authorization header/)
    for (const value of [`bearer ${token}`, `Token ${token}`, token, 'Bearer ']) {
      const reply = await send('GET', '/auth/me', { headers: [['authorization', value]] })
      expect(reply).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } })
    }
    const invalid = await send('GET', '/auth/me', { headers: bearer(`${token.slice(0, -2)}xx`) })
    expect(invalid).toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    })
    expect(invalid.body.error).toBe('Invalid or expired token')
  })

  it('answers 401 for a duplicated Authorization header', async () => {
    const token = await login()
    const reply = await send('GET', '/auth/me', { headers: [...bearer(token), ...bearer(token)] })
    expect(reply.status).toBe(401)
  })

  it('answers 401 for an expired token', async () => {
    // Issued an hour and a minute ago for an hour, with the app's secret and issuer: expired a
    // minute ago (rather than waiting for a one-second token to run out).
    const past = new TokenService({
      secret: SECRET,
      withJti: true,
      now: () => Date.now() - 3_660_000,
    })
    const expired = await past.issue(ids.ada!, {}, { ttl: 3600 })
    expect((await send('GET', '/auth/me', { headers: bearer(expired) })).status).toBe(401)
    // The same token, issued now, is good: it is the expiry that is refused.
    const fresh = await new TokenService({ secret: SECRET, withJti: true }).issue(ids.ada!)
    expect((await send('GET', '/auth/me', { headers: bearer(fresh) })).status).toBe(200)
  })

  it('answers 401 for a valid token whose user no longer exists', async () => {
    const ghost = await auth.tokenService().issue(999_999)
    expect((await send('GET', '/auth/me', { headers: bearer(ghost) })).status).toBe(401)
  })
})

describe('POST /auth/refresh', () => {
  it('answers 400 without a token, for a fresh token, and for an invalid one', async () => {
    const missing = await send('POST', '/auth/refresh', { json: {} })
    expect(missing).toMatchObject({ status: 400, body: { error: 'Token is required' } })
    const fresh = await send('POST', '/auth/refresh', { json: { token: await login() } })
    expect(fresh.status).toBe(400)
    expect(fresh.body.error).toMatch(/eligible/)
    expect((await send('POST', '/auth/refresh', { json: { token: 'a.b.c' } })).status).toBe(400)
  })

  it('re-issues a token in its last 300 seconds with the default claims only, once', async () => {
    const old = await auth
      .tokenService()
      .issue(ids.ada!, { email: 'ada@example.com', roles: ['admin'] }, { ttl: 300 })
    const reply = await send('POST', '/auth/refresh', { json: { token: old } })
    expect(reply.status).toBe(200)
    expect(reply.headers['cache-control']).toBe('no-store')
    const claims = claimsOf(reply.body.token)
    expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'iss', 'jti', 'sub'])
    expect(claims.sub).toBe(ids.ada)
    // Never longer than the token it replaces (a login's hour; this one's 300 s).
    expect((claims.exp as number) - (claims.iat as number)).toBe(300)
    expect((await send('POST', '/auth/refresh', { json: { token: old } })).status).toBe(400)
    expect((await send('GET', '/auth/me', { headers: bearer(reply.body.token) })).status).toBe(200)
  })

  it('does not refresh a token with 301 seconds left, nor a logged-out one', async () => {
    const early = await auth.tokenService().issue(ids.ada!, {}, { ttl: 305 })
    expect((await send('POST', '/auth/refresh', { json: { token: early } })).status).toBe(400)
    const late = await auth.tokenService().issue(ids.ada!, {}, { ttl: 200 })
    expect((await send('POST', '/auth/logout', { headers: bearer(late) })).status).toBe(204)
    expect((await send('POST', '/auth/refresh', { json: { token: late } })).status).toBe(400)
  })
})

describe('POST /auth/logout', () => {
  it('revokes the token: 204, then 401 "Token revoked"', async () => {
    const token = await login()
    const out = await send('POST', '/auth/logout', { headers: bearer(token) })
    expect(out.status).toBe(204)
    const after = await send('GET', '/auth/me', { headers: bearer(token) })
    expect(after).toMatchObject({ status: 401, body: { error: 'Token revoked' } })
    expect(after.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    expect((await send('GET', '/auth/me', { headers: bearer(await login()) })).status).toBe(200)
  })

  it('answers 401 without a token', async () => {
    expect((await send('POST', '/auth/logout')).status).toBe(401)
  })
})

describe('refresh-token variation under /rt', () => {
  async function rtLogin(): Promise<Record<string, unknown>> {
    const reply = await send('POST', '/rt/auth/login', {
      json: { email: 'bob@example.com', password: 'battery staple' },
    })
    expect(reply.status).toBe(200)
    return reply.body
  }

  it('logs in with {access_token, refresh_token, expires_in: 900}', async () => {
    const body = await rtLogin()
    expect(body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      expires_in: 900,
    })
    const claims = claimsOf(body.access_token)
    expect((claims.exp as number) - (claims.iat as number)).toBe(900)
    expect((await send('GET', '/auth/me', { headers: bearer(body.access_token) })).status).toBe(200)
  })

  it('answers 400 and 401 like /auth/login', async () => {
    expect(
      (await send('POST', '/rt/auth/login', { json: { email: 'bob@example.com' } })).status,
    ).toBe(400)
    expect(
      (
        await send('POST', '/rt/auth/login', {
          json: { email: 'bob@example.com', password: 'nope' },
        })
      ).status,
    ).toBe(401)
  })

  it('rotates; reusing the old token is a 401 that revokes the family', async () => {
    const first = await rtLogin()
    const rotated = await send('POST', '/rt/auth/refresh', {
      json: { refresh_token: first.refresh_token },
    })
    expect(rotated.status).toBe(200)
    expect(rotated.headers['cache-control']).toBe('no-store')
    expect(rotated.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      expires_in: 900,
    })
    expect(rotated.body.refresh_token).not.toBe(first.refresh_token)

    const reused = await send('POST', '/rt/auth/refresh', {
      json: { refresh_token: first.refresh_token },
    })
    expect(reused).toMatchObject({
      status: 401,
      body: { error: 'Invalid or expired refresh token' },
    })
    expect(reused.headers['www-authenticate']).toBe('Bearer')
    expect(
      (
        await send('POST', '/rt/auth/refresh', {
          json: { refresh_token: rotated.body.refresh_token },
        })
      ).status,
    ).toBe(401)
  })

  it('answers 400 without refresh_token, 401 for an unknown or expired one', async () => {
    const refresh = (token?: string) =>
      send('POST', '/rt/auth/refresh', {
        json: token === undefined ? {} : { refresh_token: token },
      })
    expect((await refresh()).status).toBe(400)
    expect((await refresh('f'.repeat(64))).status).toBe(401)
    const expired = 'e'.repeat(64)
    const { refreshTokens } = await auth.database()
    await refreshTokens.insert({
      userId: ids.bob!,
      tokenHash: hashRefreshToken(expired),
      familyId: 'old',
      expiresAt: '2001-01-01 00:00:00',
    })
    const reply = await refresh(expired)
    expect(reply).toMatchObject({
      status: 401,
      body: { error: 'Invalid or expired refresh token' },
    })
  })

  it('lets exactly one of 10 parallel refreshes with the same token succeed', async () => {
    const { refresh_token } = await rtLogin()
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        send('POST', '/rt/auth/refresh', { json: { refresh_token } }),
      ),
    )
    expect(replies.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(401)])
  })
})

describe('POST /oauth/token', () => {
  it('grants a password grant with the RFC 6749 token response', async () => {
    const reply = await send('POST', '/oauth/token', {
      form: 'grant_type=password&username=ada%40example.com&password=correct+horse',
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'read write',
    })
    expect(reply.headers['cache-control']).toBe('no-store')
    expect(
      (await send('GET', '/auth/me', { headers: bearer(reply.body.access_token) })).status,
    ).toBe(200)
  })

  it('answers 400 invalid_grant for failed credentials', async () => {
    const reply = await send('POST', '/oauth/token', {
      json: { grant_type: 'password', username: 'ada@example.com', password: 'nope' },
    })
    expect(reply.status).toBe(400)
    expect(reply.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.any(String),
    })
    expect(reply.headers['cache-control']).toBe('no-store')
  })

  it('answers 400 unsupported_grant_type for other grants and without one (the spec has no invalid_request)', async () => {
    const other = await send('POST', '/oauth/token', { form: 'grant_type=client_credentials' })
    expect(other.status).toBe(400)
    expect(other.body).toMatchObject({
      error: 'unsupported_grant_type',
      error_description: expect.stringContaining('client_credentials'),
    })
    const none = await send('POST', '/oauth/token', { form: '' })
    expect(none).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } })
  })

  it('answers its errors as JSON whatever Accept asks for (RFC 6749 5.2)', async () => {
    const reply = await send('POST', '/oauth/token', {
      form: 'grant_type=password&username=ada%40example.com&password=nope',
      headers: [['accept', 'text/plain']],
    })
    expect(reply.status).toBe(400)
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(reply.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.any(String),
    })
  })

  it('answers 400 invalid_grant for a password grant without a password', async () => {
    const reply = await send('POST', '/oauth/token', {
      json: { grant_type: 'password', username: 'ada@example.com' },
    })
    expect(reply).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })
})

describe('GET /admin/users (role admin)', () => {
  it('lists users (id, email, name) for an admin', async () => {
    const reply = await send('GET', '/admin/users', { headers: bearer(await login()) })
    expect(reply.status).toBe(200)
    const users = reply.body.users as Record<string, unknown>[]
    expect(users[0]).toEqual({ id: ids.ada, email: 'ada@example.com', name: 'Ada' })
    expect(users.length).toBeGreaterThanOrEqual(4)
    expect(JSON.stringify(reply.body)).not.toContain('hash')
  })

  it('answers 403 {error: "Forbidden"} without the role, 401 without a token', async () => {
    const forbidden = await send('GET', '/admin/users', {
      headers: bearer(await login('bob@example.com', 'battery staple')),
    })
    expect(forbidden).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect((await send('GET', '/admin/users')).status).toBe(401)
  })
})
