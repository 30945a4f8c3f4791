/**
 * The example app against DESIGN.md and the spec, over real HTTP: the rows that
 * conformance.test.ts, example-app.test.ts and example-auth.test.ts leave unasserted (the
 * fallback's negotiated body, the refresh window's edges, the token rules, the refresh-token
 * variation's answers, the throttle and error headers, signed-URL details, inclusive limits,
 * proxy trust).
 */
import { createHmac, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, createUsers, makeProject } from '../support/project.js'
import {
  bearer,
  claimsOf,
  clientOf,
  freshClient,
  serveApp,
  type Answer,
  type ServedApp,
} from '../support/server.js'

const SECRET = 'conformance-5-secret-of-at-least-32-bytes'
// The first key signs, every key verifies (DESIGN: "one signing key, several verification keys").
const SIGNING_KEY = 'conformance-5-signing-key-of-32-bytes-or-more'
const OLD_KEY = 'conformance-5-retired-key-of-32-bytes-or-more'
const PASSWORD = 'correct horse battery staple'

let app: ServedApp

const { send, get, postJson } = clientOf(() => app)

const now = (): number => Math.floor(Date.now() / 1000)

/** An HS256 JWT signed with the app's secret: the claims given, a fresh jti unless given. */
function jwt(claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  const signed = `${part({ alg: 'HS256', typ: 'JWT', ...header })}.${part({
    iss: 'framework-app',
    jti: randomBytes(16).toString('hex'),
    ...claims,
  })}`
  return `${signed}.${createHmac('sha256', SECRET).update(signed).digest('base64url')}`
}

const signWith = (key: string, payload: string): string =>
  createHmac('sha256', key).update(payload).digest('hex')

const expectErrorHeaders = (answer: Answer): void => {
  expect(answer.headers['cache-control']).toBe('no-store')
  expect(answer.headers['x-content-type-options']).toBe('nosniff')
}

beforeAll(async () => {
  assertBuilt()
  const dir = makeProject()
  const env = { JWT_SECRET: SECRET, DATABASE_URL: `sqlite:${join(dir, 'app.db')}` }
  await createUsers(env, PASSWORD, [
    { email: 'ada@example.com', name: 'Ada', roles: 'admin' },
    { email: 'bob@example.com', name: 'Bob' },
  ])
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', join(dir, 'cache')], {
    env: { ...env, APP_URL: '', URL_SIGNING_KEYS: `${SIGNING_KEY},${OLD_KEY}` },
  })
})

afterAll(async () => {
  expect(await app?.stop()).toBe(0)
  cleanupProjects()
})

describe('conformance-5: routing', () => {
  // DESIGN: "Error bodies are negotiated from Accept ... application/problem+json (RFC 9457) and
  // text/plain when asked"; the fallback's JSON stays {error, path}.
  it('negotiates the catch-all 404 from Accept like every error, {error, path} as JSON', async () => {
    const problem = await get('/no/such/page?x=1', { accept: 'application/problem+json' })
    expect(problem.status).toBe(404)
    expect(problem.headers['content-type']).toBe('application/problem+json')
    expect(problem.json()).toMatchObject({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      instance: '/no/such/page',
      path: '/no/such/page',
    })
    expectErrorHeaders(problem)
    const text = await get('/no/such/page', { accept: 'text/plain' })
    expect([text.status, text.text]).toEqual([404, 'Not Found\n'])
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8')
    expectErrorHeaders(text)
    for (const accept of ['application/json', '*/*', 'text/html']) {
      const json = await get('/no/such/page', { accept })
      expect([json.status, json.json()]).toEqual([
        404,
        { error: 'Not Found', path: '/no/such/page' },
      ])
      expect(json.headers['content-type']).toBe('application/json; charset=utf-8')
      expectErrorHeaders(json)
    }
  })

  it('answers the domain group: 405 with Allow, HEAD without a body, another host the fallback', async () => {
    const host = { host: `acme.localhost:${app.port}` }
    const post = await send('POST', '/whoami', { headers: host })
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD'])
    expectErrorHeaders(post)
    const head = await send('HEAD', '/whoami', { headers: host })
    expect([head.status, head.text, head.headers['content-length']]).toEqual([200, '', '18'])
    const other = await get('/whoami', { host: `a.b.localhost:${app.port}` })
    expect([other.status, other.json()]).toEqual([404, { error: 'Not Found', path: '/whoami' }])
  })

  it('answers HEAD on a typed and an unhandled error with their status and error headers, no body', async () => {
    for (const [path, status] of [
      ['/demo/error/418', 418],
      ['/demo/crash', 500],
    ] as const) {
      const answer = await send('HEAD', path)
      expect([answer.status, answer.text]).toEqual([status, ''])
      expectErrorHeaders(answer)
    }
  })

  it('ignores an override to a method that is not one, and any override on PATCH', async () => {
    const method = async (verb: string, value: string): Promise<string> =>
      (await send(verb, '/demo/echo', { headers: { 'x-http-method-override': value } })).json()
        .method
    expect(await method('POST', 'FOO')).toBe('POST')
    expect(await method('POST', '')).toBe('POST')
    expect(await method('PATCH', 'DELETE')).toBe('PATCH')
  })
})

describe('conformance-5: error bodies', () => {
  it('negotiates the 415 of /demo/echo and a malformed JSON 400', async () => {
    const unsupported = await send('POST', '/demo/echo', {
      headers: { 'content-type': 'text/plain', accept: 'application/problem+json' },
      body: 'hi',
    })
    expect(unsupported.status).toBe(415)
    expect(unsupported.headers['content-type']).toBe('application/problem+json')
    expect(unsupported.json()).toMatchObject({ status: 415, title: 'Unsupported Media Type' })
    expectErrorHeaders(unsupported)
    const malformed = await send('POST', '/demo/echo', {
      headers: { 'content-type': 'application/json', accept: 'text/plain' },
      body: '{',
    })
    expect([malformed.status, malformed.headers['content-type']]).toEqual([
      400,
      'text/plain; charset=utf-8',
    ])
    expectErrorHeaders(malformed)
  })

  it('creates a resource from a urlencoded body too: 201 and Location', async () => {
    const answer = await send('POST', '/demo/resource', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=box',
    })
    expect([answer.status, answer.headers.location]).toEqual([201, '/demo/resource/1'])
    expect(answer.json()).toEqual({ id: 1, name: 'box', created: true })
  })
})

describe('conformance-5: authentication', () => {
  it('answers 400 to empty email or password, and one 401 message with the Bearer challenge', async () => {
    for (const body of [
      { email: '', password: PASSWORD },
      { email: 'ada@example.com', password: '' },
      {},
    ]) {
      const answer = await postJson('/auth/login', body)
      expect(answer.status).toBe(400)
      expect(answer.json().error).toMatch(/email and password/i)
    }
    const wrong = await postJson('/auth/login', { email: 'ada@example.com', password: 'nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.json().error).toMatch(/invalid credentials/i)
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer/)
  })

  it('refreshes a token with 300 s or less left, with default claims only, and refuses the rest', async () => {
    const claims = { sub: 1, email: 'ada@example.com', name: 'Ada', custom: 'x' }
    const t = now()
    const eligible = await postJson('/auth/refresh', {
      token: jwt({ ...claims, iat: t - 3300, exp: t + 300 }),
    })
    expect(eligible.status).toBe(200)
    expect(eligible.headers['cache-control']).toBe('no-store')
    const { token } = eligible.json() as { token: string }
    const fresh = claimsOf(token)
    expect(fresh).toMatchObject({ iss: 'framework-app', sub: 1 })
    expect(fresh.exp).toBe((fresh.iat as number) + 3600)
    expect(fresh.jti).toMatch(/^[0-9a-f]{32}$/)
    for (const custom of ['email', 'name', 'custom']) expect(fresh).not.toHaveProperty(custom)
    expect((await get('/auth/me', bearer(token))).json()).toMatchObject({ id: 1 })
    for (const refused of [
      jwt({ ...claims, iat: t - 3200, exp: t + 305 }), // more than 300 s left
      jwt({ ...claims, iat: t - 3700, exp: t - 10 }), // expired
      jwt({ ...claims, iat: t - 3400, exp: t + 200 }).slice(0, -4) + 'AAAA', // bad signature
    ]) {
      const answer = await postJson('/auth/refresh', { token: refused })
      expect(answer.status).toBe(400)
      expect(answer.json().error).toMatch(/refresh/i)
      expectErrorHeaders(answer)
    }
  })

  it('applies the token rules of DESIGN: sub, exp, iat/nbf tolerance, canonical form, alg', async () => {
    const me = async (token: string): Promise<number> =>
      (await get('/auth/me', bearer(token))).status
    const t = now()
    const valid = { sub: 1, iat: t, exp: t + 600 }
    expect(await me(jwt(valid))).toBe(200)
    expect(await me(jwt({ ...valid, sub: '1' }))).toBe(200)
    for (const sub of [0, -1, 1.5, '1e2', ' 1', 2 ** 53])
      expect(await me(jwt({ ...valid, sub }))).toBe(401)
    expect(await me(jwt({ sub: 1, iat: t }))).toBe(401) // no exp
    expect(await me(jwt({ ...valid, iat: t + 20 }))).toBe(200) // within 30 s
    expect(await me(jwt({ ...valid, iat: t + 90 }))).toBe(401)
    expect(await me(jwt({ ...valid, nbf: t + 90 }))).toBe(401)
    expect(await me(`${jwt(valid)}=`)).toBe(401) // padded
    expect(await me(jwt(valid, { alg: 'none' }).split('.').slice(0, 2).join('.') + '.')).toBe(401)
    const invalid = await get('/auth/me', bearer('x'))
    expect(invalid.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    expect(invalid.json().error).toMatch(/invalid or expired/i)
    expectErrorHeaders(invalid)
    const lower = await get('/auth/me', { authorization: `bearer ${jwt(valid)}` })
    expect(lower.status).toBe(401)
    expect(lower.json().error).toMatch(/authorization header/i)
  })

  it('rotates /rt refresh tokens with the documented answer, and accepts its access tokens', async () => {
    const login = await postJson('/rt/auth/login', { email: 'ada@example.com', password: PASSWORD })
    expect(login.headers['cache-control']).toBe('no-store')
    const first = login.json() as { access_token: string; refresh_token: string }
    expect(claimsOf(first.access_token)).toMatchObject({ sub: 1, roles: ['admin'] })
    expect((await get('/auth/me', bearer(first.access_token))).status).toBe(200)
    expect((await get('/admin/users', bearer(first.access_token))).status).toBe(200)
    const rotated = await postJson('/rt/auth/refresh', { refresh_token: first.refresh_token })
    expect(rotated.status).toBe(200)
    expect(rotated.headers['cache-control']).toBe('no-store')
    const next = rotated.json() as Record<string, unknown>
    expect(Object.keys(next).sort()).toEqual(['access_token', 'expires_in', 'refresh_token'])
    expect(next.expires_in).toBe(900)
    expect(next.refresh_token).toMatch(/^[0-9a-f]{64}$/)
    expect(next.refresh_token).not.toBe(first.refresh_token)
    const claims = claimsOf(next.access_token as string)
    expect((claims.exp as number) - (claims.iat as number)).toBe(900)
    const theft = await postJson('/rt/auth/refresh', { refresh_token: first.refresh_token })
    expect(theft.status).toBe(401)
    expect(theft.headers['www-authenticate']).toMatch(/^Bearer/)
    expectErrorHeaders(theft)
    const family = await postJson('/rt/auth/refresh', { refresh_token: next.refresh_token })
    expect(family.status).toBe(401)
    expect(family.json().error).toMatch(/refresh token/i)
  })

  it('answers a failed OAuth password grant with invalid_grant and an error_description', async () => {
    const answer = await postJson('/oauth/token', {
      grant_type: 'password',
      username: 'ada@example.com',
      password: 'nope',
    })
    expect(answer.status).toBe(400)
    expect(answer.json()).toEqual({ error: 'invalid_grant', error_description: expect.any(String) })
    expectErrorHeaders(answer)
  })

  it('answers 403 Forbidden to a token without a roles claim, and a revoked token cannot refresh', async () => {
    const t = now()
    const noRoles = await get('/admin/users', bearer(jwt({ sub: 1, iat: t, exp: t + 600 })))
    expect([noRoles.status, noRoles.json().error]).toEqual([403, 'Forbidden'])
    expectErrorHeaders(noRoles)
    const expiring = jwt({ sub: 1, iat: t - 3500, exp: t + 100 })
    expect((await postJson('/auth/logout', {}, bearer(expiring))).status).toBe(204)
    const revoked = await get('/auth/me', bearer(expiring))
    expect([revoked.status, revoked.json().error]).toEqual([401, 'Token revoked'])
    expect(revoked.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    expect((await postJson('/auth/refresh', { token: expiring })).status).toBe(400)
  })
})

describe('conformance-5: throttle', () => {
  it('sends the rate-limit headers on /api/v1 successes and none on /api/v2', async () => {
    const who = freshClient()
    const before = now()
    const answer = await get('/api/v1/users/1', who)
    expect(answer.status).toBe(200)
    expect(answer.headers['x-ratelimit-limit']).toBe('60')
    expect(answer.headers['x-ratelimit-remaining']).toBe('59')
    const reset = Number(answer.headers['x-ratelimit-reset'])
    expect(reset).toBeGreaterThanOrEqual(before + 59)
    expect(reset).toBeLessThanOrEqual(now() + 61)
    expect(answer.headers['ratelimit-limit']).toBe('60')
    expect(answer.headers['ratelimit-remaining']).toBe('59')
    expect(Number(answer.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1)
    expect(Number(answer.headers['ratelimit-reset'])).toBeLessThanOrEqual(60)
    expect(answer.headers['server-timing']).toMatch(/throttle/)
    const v2 = await get('/api/v2/users/1', who)
    expect(v2.headers['x-ratelimit-limit']).toBeUndefined()
  })

  it('answers the 6th login in 300 s with 429, a reset 300 s away and the error headers', async () => {
    const who = freshClient()
    const wrong = { email: 'bob@example.com', password: 'wrong' }
    for (let i = 0; i < 5; i += 1)
      expect((await postJson('/auth/login', wrong, who)).status).toBe(401)
    const before = now()
    const refused = await postJson('/auth/login', wrong, who)
    expect(refused.status).toBe(429)
    expect(refused.json()).toMatchObject({ error: 'Too Many Requests', code: 429 })
    expectErrorHeaders(refused)
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(300)
    expect(refused.headers['ratelimit-reset']).toBe(String(retryAfter))
    expect(refused.headers['x-ratelimit-limit']).toBe('5')
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThan(before + 200)
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(now() + 301)
  })
})

describe('conformance-5: signed URLs', () => {
  it('signs the key-sorted, RFC 3986-encoded query, and verifies with every configured key', async () => {
    const future = now() + 600
    const payload = `/demo/signed/4?_exp=${future}&a=1&b=x%20y%21`
    for (const key of [SIGNING_KEY, OLD_KEY]) {
      const url = `/demo/signed/4?b=x%20y!&a=1&_exp=${future}&_sig=${signWith(key, payload)}`
      expect([(await get(url)).status, (await get(url)).json()]).toEqual([
        200,
        { id: 4, signed: true },
      ])
    }
    const { url } = (await get('/demo/sign/4')).json() as { url: string }
    const [path, query] = url.split('?') as [string, string]
    const exp = /_exp=(\d+)/.exec(query)![1]
    expect(url).toBe(`${path}?_exp=${exp}&_sig=${signWith(SIGNING_KEY, `${path}?_exp=${exp}`)}`)
  })

  it('answers a repeated _sig with 400 and a signature that is not hex with 403', async () => {
    const sig = signWith(SIGNING_KEY, '/demo/signed/4')
    const repeated = await get(`/demo/signed/4?_sig=${sig}&_sig=${sig}`)
    expect(repeated.status).toBe(400)
    expectErrorHeaders(repeated)
    expect((await get('/demo/signed/4?_sig=zz')).status).toBe(403)
  })
})

describe('conformance-5: limits and proxies', () => {
  it('accepts an uploaded file of exactly 10 MiB and refuses one byte more with 413', async () => {
    const upload = (size: number): Promise<Answer> =>
      send('POST', '/demo/echo', {
        headers: { 'content-type': 'multipart/form-data; boundary=fw5' },
        body: Buffer.concat([
          Buffer.from(
            '--fw5\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n' +
              'Content-Type: application/octet-stream\r\n\r\n',
          ),
          Buffer.alloc(size, 97),
          Buffer.from('\r\n--fw5--\r\n'),
        ]),
      })
    const exact = await upload(10 * 1024 * 1024)
    expect(exact.status).toBe(200)
    expect(exact.json().files).toEqual([
      { field: 'f', name: 'x.bin', size: 10 * 1024 * 1024, type: 'application/octet-stream' },
    ])
    const over = await upload(10 * 1024 * 1024 + 1)
    expect(over.status).toBe(413)
    expectErrorHeaders(over)
  })

  it('accepts a urlencoded body of exactly 1 MiB and refuses one byte more with 413', async () => {
    const form = (size: number): Promise<Answer> =>
      send('POST', '/demo/echo', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `a=${'x'.repeat(size - 2)}`,
      })
    expect((await form(1024 * 1024)).status).toBe(200)
    expect((await form(1024 * 1024 + 1)).status).toBe(413)
  })

  it('reads X-Forwarded-For right to left through trusted proxies, ::ffff:a.b.c.d as a.b.c.d', async () => {
    const ip = async (forwarded: string): Promise<string> =>
      (await get('/demo/attributes', { 'x-forwarded-for': forwarded })).json().client_ip
    expect(await ip('203.0.113.9, 10.0.0.1')).toBe('10.0.0.1')
    expect(await ip('203.0.113.9, 127.0.0.5')).toBe('203.0.113.9')
    expect(await ip('::ffff:1.2.3.4')).toBe('1.2.3.4')
  })
})
