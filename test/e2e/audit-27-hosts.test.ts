/**
 * Several hosts sharing one PostgreSQL and one Redis: separate `fw serve` processes of the example
 * app on one fresh database (and one Redis), started at the same instant on an empty schema.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IN_CI, POSTGRES_URL, reachable, REDIS_URL } from '../auth/support.js'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'
import { bearer, freshClient, sendTo, serveApp, type ServedApp } from '../support/server.js'

const SECRET = 'hosts-secret-of-at-least-thirty-two-bytes!'
const PASSWORD = 'correct horse battery staple'
const services = (await reachable(POSTGRES_URL)) && (await reachable(REDIS_URL))
if (!services && IN_CI) throw new Error('PostgreSQL and Redis are required in CI')

/** A database of its own (fw serve names no table prefix), dropped afterwards. */
const DB_NAME = `fw_audit27_hosts_${process.pid}_${randomBytes(3).toString('hex')}`
const dbUrl = (name = DB_NAME): string => {
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return url.toString()
}

async function admin(sql: string, url = POSTGRES_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

let hosts: ServedApp[] = []
let env: Record<string, string>

const post = (host: ServedApp, path: string, body: unknown, headers: Record<string, string> = {}) =>
  sendTo(host.port, 'POST', path, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })

describe.skipIf(!services)('three hosts on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    assertBuilt()
    await admin(`CREATE DATABASE ${DB_NAME}`)
    env = { JWT_SECRET: SECRET, DATABASE_URL: dbUrl(), REDIS_URL, APP_URL: '' }
    // Separate hosts: a cache directory each, all started at once on the empty database.
    hosts = await Promise.all(
      [1, 2, 3].map(() =>
        serveApp(['--routes', 'routes.example.ts', '--cache', join(makeProject(), 'cache')], {
          env,
        }),
      ),
    )
  }, 120_000)

  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.stop()))
    cleanupProjects()
    await admin(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`)
  })

  it('answers the first requests of every host on the empty database (the schema made once)', async () => {
    const client = freshClient()
    const answers = await Promise.all(
      hosts.map((h) =>
        post(h, '/auth/login', { email: 'nobody@example.com', password: PASSWORD }, client),
      ),
    )
    expect(answers.map((a) => [a.status, a.json().error])).toEqual(
      hosts.map(() => [401, expect.any(String)]),
    )
  }, 60_000)

  it('adds a user once when two fw user:create race for one email', async () => {
    const args = ['user:create', '--email', 'ada@example.com', '--name', 'Ada', '--password-stdin']
    const runs = await Promise.all(
      [1, 2].map(() => runFw(args, { cwd: REPO_ROOT, env, input: `${PASSWORD}\n` })),
    )
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1])
    const failed = runs.find((r) => r.code === 1)!
    expect(failed.stderr).toMatch(/already exists/)
    expect(failed.stderr).not.toMatch(/\n\s+at /)
  }, 60_000)

  it('logs in on every host, and a logout on one holds on all of them at once', async () => {
    const login = await post(
      hosts[0]!,
      '/auth/login',
      { email: 'ada@example.com', password: PASSWORD },
      freshClient(),
    )
    expect(login.status).toBe(200)
    const token = login.json().token as string
    for (const h of hosts)
      expect((await sendTo(h.port, 'GET', '/auth/me', { headers: bearer(token) })).status).toBe(200)
    expect((await post(hosts[1]!, '/auth/logout', {}, bearer(token))).status).toBe(204)
    const after = await Promise.all(
      hosts.map((h) => sendTo(h.port, 'GET', '/auth/me', { headers: bearer(token) })),
    )
    expect(after.map((a) => [a.status, a.json().error])).toEqual(
      hosts.map(() => [401, 'Token revoked']),
    )
  }, 60_000)

  it('rotates a refresh token sent to two hosts at once for one of them, and treats the other as theft', async () => {
    const login = await post(
      hosts[0]!,
      '/rt/auth/login',
      { email: 'ada@example.com', password: PASSWORD },
      freshClient(),
    )
    expect(login.status).toBe(200)
    const { refresh_token, access_token } = login.json() as {
      refresh_token: string
      access_token: string
    }
    const answers = await Promise.all(
      [hosts[1]!, hosts[2]!].map((h) => post(h, '/rt/auth/refresh', { refresh_token })),
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([200, 401])
    const winner = answers.find((a) => a.status === 200)!.json() as {
      refresh_token: string
      access_token: string
    }
    // The family is revoked: the winner's successor and both access tokens stop working.
    expect(
      (await post(hosts[0]!, '/rt/auth/refresh', { refresh_token: winner.refresh_token })).status,
    ).toBe(401)
    for (const h of hosts) {
      for (const t of [access_token, winner.access_token])
        expect((await sendTo(h.port, 'GET', '/auth/me', { headers: bearer(t) })).status).toBe(401)
    }
  }, 60_000)

  it('counts the login throttle once across hosts: 5 spread over three, the 6th refused', async () => {
    const client = freshClient()
    const statuses: number[] = []
    const remaining: unknown[] = []
    for (let i = 0; i < 6; i++) {
      const a = await post(
        hosts[i % 3]!,
        '/auth/login',
        { email: 'ada@example.com', password: 'wrong password here' },
        client,
      )
      statuses.push(a.status)
      remaining.push(a.headers['x-ratelimit-remaining'])
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    expect(remaining).toEqual(['4', '3', '2', '1', '0', '0'])
  }, 60_000)

  it('logs one user in with a password grant and a login on two hosts at once', async () => {
    const client = freshClient()
    const [grant, login] = await Promise.all([
      sendTo(hosts[0]!.port, 'POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...client },
        body: `grant_type=password&username=ada%40example.com&password=${encodeURIComponent(PASSWORD)}`,
      }),
      post(hosts[1]!, '/auth/login', { email: 'ada@example.com', password: PASSWORD }, client),
    ])
    expect([grant.status, login.status]).toEqual([200, 200])
  }, 60_000)
})

const OLD_DB = `${DB_NAME}_old`
const NO_REDIS_DB = `${DB_NAME}_nr`

describe.skipIf(!services)('hosts on an older schema, on SQLite, and without Redis', () => {
  const started: ServedApp[] = []
  const serveHosts = async (n: number, hostEnv: Record<string, string>, workers = false) => {
    const made = await Promise.all(
      Array.from({ length: n }, () =>
        serveApp(
          [
            '--routes',
            'routes.example.ts',
            '--cache',
            join(makeProject(), 'cache'),
            ...(workers ? ['--workers', '2'] : []),
          ],
          { env: hostEnv },
        ),
      ),
    )
    started.push(...made)
    return made
  }
  const createUser = async (hostEnv: Record<string, string>, email: string) => {
    const args = ['user:create', '--email', email, '--name', 'Ada', '--password-stdin']
    const run = await runFw(args, { cwd: REPO_ROOT, env: hostEnv, input: `${PASSWORD}\n` })
    expect(run.code, run.stderr).toBe(0)
  }

  afterAll(async () => {
    await Promise.all(started.map((h) => h.stop()))
    cleanupProjects()
    await admin(`DROP DATABASE IF EXISTS ${OLD_DB} WITH (FORCE)`)
    await admin(`DROP DATABASE IF EXISTS ${NO_REDIS_DB} WITH (FORCE)`)
  })

  it('migrates the three-column tables of the spec once when hosts (two workers each) start together', async () => {
    await admin(`CREATE DATABASE ${OLD_DB}`)
    await admin(
      `CREATE TABLE users (id BIGSERIAL PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
         password_hash TEXT NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT now());
       CREATE TABLE refresh_tokens (id BIGSERIAL PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES users(id),
         token TEXT NOT NULL UNIQUE, expires_at TIMESTAMP NOT NULL);`,
      dbUrl(OLD_DB),
    )
    const hostEnv = { JWT_SECRET: SECRET, DATABASE_URL: dbUrl(OLD_DB), REDIS_URL, APP_URL: '' }
    const pair = await serveHosts(2, hostEnv, true)
    const client = freshClient()
    const first = await Promise.all(
      pair.flatMap((h) =>
        [1, 2].map(() =>
          post(h, '/rt/auth/login', { email: 'old@example.com', password: PASSWORD }, client),
        ),
      ),
    )
    expect(first.map((a) => a.status)).toEqual([401, 401, 401, 401])
    await createUser(hostEnv, 'old@example.com')
    const login = await post(
      pair[0]!,
      '/rt/auth/login',
      { email: 'old@example.com', password: PASSWORD },
      freshClient(),
    )
    expect(login.status).toBe(200)
    const refreshed = await post(pair[1]!, '/rt/auth/refresh', {
      refresh_token: login.json().refresh_token,
    })
    expect(refreshed.status).toBe(200)
  }, 120_000)

  it('answers the first requests of two hosts started together on one new SQLite file', async () => {
    const file = join(makeProject(), 'shared', 'app.db')
    const hostEnv = { JWT_SECRET: SECRET, DATABASE_URL: `sqlite:${file}`, APP_URL: '' }
    const pair = await serveHosts(2, hostEnv)
    const client = freshClient()
    const first = await Promise.all(
      pair.flatMap((h) =>
        [1, 2, 3].map(() =>
          post(h, '/auth/login', { email: 'x@example.com', password: PASSWORD }, client),
        ),
      ),
    )
    expect(first.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 401])
  }, 120_000)

  it('without REDIS_URL, refreshes a token once over two hosts, and a restarted host knows the logout', async () => {
    await admin(`CREATE DATABASE ${NO_REDIS_DB}`)
    const hostEnv = { JWT_SECRET: SECRET, DATABASE_URL: dbUrl(NO_REDIS_DB), APP_URL: '' }
    const saved = process.env.REDIS_URL
    delete process.env.REDIS_URL
    try {
      await createUser(hostEnv, 'nr@example.com')
      const pair = await serveHosts(2, hostEnv)
      // A token that expires within the refresh window, signed with the hosts' secret.
      const login = await post(
        pair[0]!,
        '/auth/login',
        { email: 'nr@example.com', password: PASSWORD },
        freshClient(),
      )
      expect(login.status).toBe(200)
      const userId = login.json().user.id as number
      const { TokenService } = await import('../../src/auth/jwt.js')
      const near = await new TokenService({ secret: SECRET, withJti: true, ttl: 120 }).issue(userId)
      const both = await Promise.all(pair.map((h) => post(h, '/auth/refresh', { token: near })))
      expect(both.map((a) => a.status).sort()).toEqual([200, 400])
      // Logout on one host; the other learns it at its restart (README: run them with REDIS_URL).
      const token = login.json().token as string
      expect((await post(pair[0]!, '/auth/logout', {}, bearer(token))).status).toBe(204)
      expect(await pair[1]!.stop()).toBe(0)
      const [again] = await serveHosts(1, hostEnv)
      const me = await sendTo(again!.port, 'GET', '/auth/me', { headers: bearer(token) })
      expect([me.status, me.json().error]).toEqual([401, 'Token revoked'])
    } finally {
      if (saved !== undefined) process.env.REDIS_URL = saved
    }
  }, 120_000)
})
