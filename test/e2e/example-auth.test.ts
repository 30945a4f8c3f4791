/**
 * The example app's authentication and throttling over real HTTP: a user made with
 * `fw user:create`, then login, me, refresh rules, logout (revocation), the refresh-token
 * variation, the OAuth-style grant, the admin role, and the throttle limits of DESIGN.md.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'
import { serveApp, type ServedApp } from '../support/server.js'

const SECRET = 'e2e-secret-of-at-least-thirty-two-bytes!'
let app: ServedApp
let env: Record<string, string>

const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
// Each login test uses its own client address (X-Forwarded-For from loopback is trusted), so the
// login throttle (5 per 300 s per client) only bites where a test wants it to. With REDIS_URL set
// the counters outlive the run: each run moves its 10.0.x.y addresses to a 10.<run>.x.y of its
// own, so running the tests again within 300 s starts from fresh counters.
const RUN = 1 + Math.floor(Math.random() * 254)
const from = (ip: string): Record<string, string> => ({
  'x-forwarded-for': ip.replace(/^10\.0\./, `10.${RUN}.`),
})

beforeAll(async () => {
  assertBuilt()
  const dir = makeProject()
  env = { JWT_SECRET: SECRET, DATABASE_URL: `sqlite:${join(dir, 'app.db')}` }
  for (const [email, name, roles] of [
    ['ada@example.com', 'Ada', 'admin'],
    ['bob@example.com', 'Bob', ''],
  ] as const) {
    const args = [
      'user:create',
      '--email',
      email,
      '--name',
      name,
      '--password-stdin',
      ...(roles ? ['--roles', roles] : []),
    ]
    const created = await runFw(args, {
      cwd: REPO_ROOT,
      env,
      input: 'correct horse battery staple\n',
    })
    expect(created.code, created.stderr).toBe(0)
  }
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', join(dir, 'cache')], { env })
})

afterAll(async () => {
  await app?.stop()
  cleanupProjects()
})

async function login(
  email: string,
  ip: string,
): Promise<{ token: string; user: { id: number; email: string; name: string } }> {
  const response = await post(
    '/auth/login',
    { email, password: 'correct horse battery staple' },
    from(ip),
  )
  expect(response.status).toBe(200)
  return response.json() as Promise<{
    token: string
    user: { id: number; email: string; name: string }
  }>
}

describe('the example app: authentication', () => {
  it('logs in, answers /auth/me, and revokes the token on logout', async () => {
    const { token, user } = await login('ada@example.com', '10.0.0.1')
    expect(user).toMatchObject({ email: 'ada@example.com', name: 'Ada' })
    const me = await fetch(`${app.url}/auth/me`, { headers: bearer(token) })
    expect(await me.json()).toMatchObject({ id: user.id, email: 'ada@example.com', name: 'Ada' })
    expect((await post('/auth/logout', {}, bearer(token))).status).toBe(204)
    const after = await fetch(`${app.url}/auth/me`, { headers: bearer(token) })
    expect(after.status).toBe(401)
    expect(await after.json()).toMatchObject({ error: 'Token revoked' })
  })

  it('answers the spec error table: 400 missing fields, 401 bad credentials, 401 no or bad bearer', async () => {
    expect((await post('/auth/login', { email: 'ada@example.com' }, from('10.0.0.2'))).status).toBe(
      400,
    )
    const wrong = await post(
      '/auth/login',
      { email: 'ada@example.com', password: 'nope' },
      from('10.0.0.2'),
    )
    const unknown = await post(
      '/auth/login',
      { email: 'who@example.com', password: 'nope' },
      from('10.0.0.2'),
    )
    expect([wrong.status, unknown.status]).toEqual([401, 401])
    const message = (r: Response): Promise<string> =>
      r.json().then((body) => (body as { error: string }).error)
    expect(await message(wrong)).toBe(await message(unknown))
    const none = await fetch(`${app.url}/auth/me`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    const bad = await fetch(`${app.url}/auth/me`, { headers: bearer('a.b.c') })
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    expect((await post('/auth/refresh', {})).status).toBe(400)
  })

  it('refuses to refresh a token with more than 300 s left', async () => {
    const { token } = await login('bob@example.com', '10.0.0.3')
    const refused = await post('/auth/refresh', { token })
    expect(refused.status).toBe(400)
  })

  it('rotates refresh tokens under /rt and treats reuse as theft', async () => {
    const first = await post(
      '/rt/auth/login',
      { email: 'bob@example.com', password: 'correct horse battery staple' },
      from('10.0.0.4'),
    )
    const issued = (await first.json()) as {
      access_token: string
      refresh_token: string
      expires_in: number
    }
    expect(issued.expires_in).toBe(900)
    expect(issued.refresh_token).toMatch(/^[0-9a-f]{64}$/)
    const rotated = await post('/rt/auth/refresh', { refresh_token: issued.refresh_token })
    const next = (await rotated.json()) as { refresh_token: string }
    expect(rotated.status).toBe(200)
    expect((await post('/rt/auth/refresh', { refresh_token: issued.refresh_token })).status).toBe(
      401,
    )
    expect((await post('/rt/auth/refresh', { refresh_token: next.refresh_token })).status).toBe(401)
  })

  it('grants OAuth-style password tokens accepted by /auth/me', async () => {
    const granted = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...from('10.0.0.5') },
      body: JSON.stringify({
        grant_type: 'password',
        username: 'bob@example.com',
        password: 'correct horse battery staple',
      }),
    })
    const body = (await granted.json()) as { access_token: string }
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' })
    expect(granted.headers.get('cache-control')).toBe('no-store')
    expect((await fetch(`${app.url}/auth/me`, { headers: bearer(body.access_token) })).status).toBe(
      200,
    )
    const unsupported = await post(
      '/oauth/token',
      { grant_type: 'client_credentials' },
      from('10.0.0.5'),
    )
    expect(await unsupported.json()).toMatchObject({ error: 'unsupported_grant_type' })
    // An OAuth error carries the headers of every error response (DESIGN).
    expect(unsupported.headers.get('cache-control')).toBe('no-store')
    expect(unsupported.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('lets admins list users and answers 403 to others', async () => {
    const admin = await login('ada@example.com', '10.0.0.6')
    const listed = await fetch(`${app.url}/admin/users`, { headers: bearer(admin.token) })
    const { users } = (await listed.json()) as { users: Record<string, unknown>[] }
    expect(users.map((u) => u.email).sort()).toEqual(['ada@example.com', 'bob@example.com'])
    expect(users.every((u) => !('password_hash' in u))).toBe(true)
    const bob = await login('bob@example.com', '10.0.0.6')
    const denied = await fetch(`${app.url}/admin/users`, { headers: bearer(bob.token) })
    expect(denied.status).toBe(403)
    expect(await denied.json()).toMatchObject({ error: 'Forbidden' })
  })
})

describe('the example app: throttling', () => {
  it('answers the 6th login from one client within 300 s with 429 and Retry-After', async () => {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 6; i++) {
      last = await post(
        '/auth/login',
        { email: 'bob@example.com', password: 'wrong' },
        from('10.0.9.9'),
      )
      statuses.push(last.status)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0')
  })

  // Each login route had its own counter: 15 password guesses per client every 300 s.
  it('counts the three login routes against one limit', async () => {
    const client = from('10.0.9.10')
    const wrong = { email: 'bob@example.com', password: 'wrong' }
    for (let i = 0; i < 3; i++) expect((await post('/auth/login', wrong, client)).status).toBe(401)
    expect((await post('/rt/auth/login', wrong, client)).status).toBe(401)
    const oauth = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { ...client, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&username=bob%40example.com&password=wrong',
    })
    expect(oauth.status).toBe(400)
    expect(oauth.headers.get('x-ratelimit-remaining')).toBe('0')
    expect((await post('/rt/auth/login', wrong, client)).status).toBe(429)
    expect((await post('/auth/login', wrong, client)).status).toBe(429)
  })

  it('stacks /api/v1/limited (5 per 60 s) on the /api/v1 group limit (60 per 60 s)', async () => {
    const answers: Response[] = []
    for (let i = 0; i < 6; i++)
      answers.push(await fetch(`${app.url}/api/v1/limited`, { headers: from('10.0.8.8') }))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429])
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('5')
    expect(answers[0]!.headers.get('x-ratelimit-remaining')).toBe('4')
    const group = await fetch(`${app.url}/api/v1/users/1`, { headers: from('10.0.8.8') })
    expect(group.status).toBe(200)
    expect(group.headers.get('x-ratelimit-limit')).toBe('60')
    // 5 allowed /limited requests + this one; the refused 6th gave its group slot back.
    expect(group.headers.get('x-ratelimit-remaining')).toBe('54')
  })
})
