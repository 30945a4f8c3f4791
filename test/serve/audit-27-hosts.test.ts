/**
 * Audit 27, several hosts on one Redis and one PostgreSQL: the production `server.mjs` that
 * `fw init` scaffolds stopped listening at SIGTERM but never exited once a request had opened the
 * throttle's Redis connection (and only after the pool's 10 s idle timeout for PostgreSQL): a
 * rolling restart of one host waited for the orchestrator's SIGKILL. `fw serve` closes both.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { IN_CI, POSTGRES_URL, reachable, REDIS_URL } from '../auth/support.js'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'
import { freshClient, listeningPort, sendTo } from '../support/server.js'

const services = (await reachable(POSTGRES_URL)) && (await reachable(REDIS_URL))
if (!services && IN_CI) throw new Error('PostgreSQL and Redis are required in CI')

const ROUTES = `import { defineRoutes } from 'fw'
import { authRoutes } from 'fw/auth'
export default defineRoutes((r) => {
  r.group({ middleware: ['throttle:100,60'] }, (r) => r.get('/counted', () => ({ ok: true }), 'counted'))
  authRoutes(r)
})
`
const DB_NAME = `fw_audit27_srv_${process.pid}_${randomBytes(3).toString('hex')}`
const children: ChildProcess[] = []

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

afterAll(async () => {
  cleanupProjects()
  if (services) await admin(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`)
})

describe.skipIf(!services)('the scaffolded server.mjs on a shared Redis and PostgreSQL', () => {
  it('exits after SIGTERM once requests have used Redis (throttle, revocations) and PostgreSQL', async () => {
    assertBuilt()
    await admin(`CREATE DATABASE ${DB_NAME}`)
    const app = join(makeProject(), 'app')
    expect((await runFw(['init', app], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(app, 'node_modules'))
    symlinkSync(REPO_ROOT, join(app, 'node_modules', 'fw'), 'dir')
    writeFileSync(join(app, 'routes.ts'), ROUTES)
    expect((await runFw(['route:cache', 'build'], { cwd: app })).code).toBe(0)
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${DB_NAME}`
    const child = spawn(process.execPath, [join(app, 'server.mjs')], {
      cwd: app,
      env: {
        ...process.env,
        PORT: '0',
        LOG_LEVEL: 'silent',
        JWT_SECRET: 'hosts-secret-of-at-least-thirty-two-bytes!',
        DATABASE_URL: url.toString(),
        REDIS_URL,
      },
    })
    children.push(child)
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    )
    const port = await listeningPort(child)
    expect((await sendTo(port, 'GET', '/counted', { headers: freshClient() })).status).toBe(200)
    const login = await sendTo(port, 'POST', '/auth/login', {
      headers: { 'content-type': 'application/json', ...freshClient() },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'not the password' }),
    })
    expect(login.status).toBe(401)
    child.kill('SIGTERM')
    // Well past the drain's 10 s and PostgreSQL's idle timeout: before, it never exited.
    const outcome = await Promise.race([
      exited,
      new Promise((done) => setTimeout(() => done('still running 25 s after SIGTERM'), 25_000)),
    ])
    expect(outcome).toEqual({ code: 0, signal: null })
  }, 60_000)
})
