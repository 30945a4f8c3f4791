/**
 * The example app under `fw serve --workers 2` without Redis: the primary keeps the revocation
 * list, so a logout holds on both workers and a token refreshes once for the whole server (with a
 * list per worker, /auth/me alternated 200/401 after a logout and a token refreshed once per worker).
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TokenService } from '../../src/auth/jwt.js'
import { assertBuilt, cleanupProjects, createUsers, makeProject } from '../support/project.js'
import { serveApp, type ServedApp } from '../support/server.js'

const SECRET = 'e2e-secret-of-at-least-thirty-two-bytes!'
const PASSWORD = 'correct horse battery staple'
// Fresh connections, so the cluster's round robin spreads the requests over both workers.
const CLOSE = { connection: 'close' }
const redisUrl = process.env.REDIS_URL

let app: ServedApp
let userId: number

const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...CLOSE, ...headers },
    body: JSON.stringify(body),
  })
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

beforeAll(async () => {
  assertBuilt()
  // Not even an empty REDIS_URL reaches fw serve: the primary must be what holds the list.
  delete process.env.REDIS_URL
  const dir = makeProject()
  const env = { JWT_SECRET: SECRET, DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, APP_URL: '' }
  await createUsers(env, PASSWORD, [{ email: 'ada@example.com', name: 'Ada' }])
  app = await serveApp(
    ['--routes', 'routes.example.ts', '--cache', join(dir, 'cache'), '--workers', '2'],
    { env },
  )
  const login = await post('/auth/login', { email: 'ada@example.com', password: PASSWORD })
  expect(login.status).toBe(200)
  userId = ((await login.json()) as { user: { id: number } }).user.id
}, 90_000)

afterAll(async () => {
  if (redisUrl !== undefined) process.env.REDIS_URL = redisUrl
  if (app) expect(await app.stop(), app.output()).toBe(0)
  cleanupProjects()
})

describe('fw serve --workers 2 without REDIS_URL: one revocation list', () => {
  it('answers 401 Token revoked on every worker after a logout', async () => {
    const login = await post('/auth/login', { email: 'ada@example.com', password: PASSWORD })
    const { token } = (await login.json()) as { token: string }
    const before = await fetch(`${app.url}/auth/me`, { headers: { ...bearer(token), ...CLOSE } })
    expect(before.status).toBe(200)
    expect((await post('/auth/logout', {}, bearer(token))).status).toBe(204)
    const answers: { status: number; error: unknown }[] = []
    for (let i = 0; i < 8; i++) {
      const me = await fetch(`${app.url}/auth/me`, { headers: { ...bearer(token), ...CLOSE } })
      answers.push({ status: me.status, error: ((await me.json()) as { error?: unknown }).error })
    }
    expect(answers).toEqual(
      Array.from({ length: 8 }, () => ({ status: 401, error: 'Token revoked' })),
    )
  }, 60_000)

  it('refreshes a token once, whichever worker gets the next attempt', async () => {
    // A token that expires within the refresh window, signed with the server's secret.
    const tokens = new TokenService({ secret: SECRET, withJti: true, ttl: 120 })
    const token = await tokens.issue(userId)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await post('/auth/refresh', { token })).status)
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400])
  }, 60_000)
})
