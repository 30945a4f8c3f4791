/**
 * `fw serve` in production (APP_ENV=production) with fw.config's `kernel.hsts` says
 * Strict-Transport-Security on what it answers behind a TLS proxy (X-Forwarded-Proto https from
 * loopback, trusted by default), the example app included, none without it, never on the plain-http 301; a `kernel.hsts` that
 * hstspreload.org would refuse stops the start with one line at the config's `kernel` key.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  makeProject,
  REPO_ROOT,
  runFw,
} from '../support/project.js'
import { sendTo, serveApp, type ServedApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const PRODUCTION = { APP_ENV: 'production', JWT_SECRET: 's'.repeat(40), URL_SIGNING_KEYS: '' }
const HTTPS = { 'x-forwarded-proto': 'https' }

describe('fw serve routes.example.ts in production, kernel.hsts true in fw.config.mjs', () => {
  let app: ServedApp
  beforeAll(async () => {
    const dir = makeProject({ 'fw.config.mjs': 'export default { kernel: { hsts: true } }\n' })
    const routes = join(REPO_ROOT, 'routes.example.ts')
    app = await serveApp(['--routes', routes, '--cache', join(dir, 'cache')], {
      cwd: dir,
      env: PRODUCTION,
    })
  }, 60_000)
  afterAll(() => app?.stop())

  it('says Strict-Transport-Security, 180 days, on https answers: JSON, errors, the fallback', async () => {
    for (const [path, status] of [
      ['/api/v1/users/1', 200],
      ['/demo/error/403', 403],
      ['/auth/me', 401],
      ['/no/such/page', 404],
    ] as const) {
      const answer = await sendTo(app.port, 'GET', path, { headers: HTTPS })
      expect(answer.status, path).toBe(status)
      expect(answer.headers['strict-transport-security'], path).toBe('max-age=15552000')
    }
  })

  it('not on the 301 that plain http gets', async () => {
    const answer = await sendTo(app.port, 'GET', '/api/v1/users/1')
    expect(answer.status).toBe(301)
    expect(answer.headers.location).toBe(`https://127.0.0.1/api/v1/users/1`)
    expect(answer.headers['strict-transport-security']).toBeUndefined()
  })
})

const ROUTES = `export default (r) => {\n  r.get('/', () => ({ home: true }), 'home')\n}\n`

function project(kernel: string): string {
  return makeProject({
    'routes.mjs': ROUTES,
    'fw.config.mjs': `export default {\n  routes: 'routes.mjs',\n  kernel: ${kernel},\n}\n`,
  })
}

describe('kernel.hsts in fw.config.mjs', () => {
  it('shapes the header, preload included', async () => {
    const dir = project(`{ hsts: { maxAge: 63072000, includeSubDomains: true, preload: true } }`)
    const app = await serveApp([], { cwd: dir, env: PRODUCTION })
    try {
      const answer = await sendTo(app.port, 'GET', '/', { headers: HTTPS })
      expect(answer.json()).toEqual({ home: true })
      expect(answer.headers['strict-transport-security']).toBe(
        'max-age=63072000; includeSubDomains; preload',
      )
    } finally {
      await app.stop()
    }
  }, 60_000)

  it.each([
    ['false', '{ hsts: false }'],
    ['unset', '{}'],
  ])(
    '%s sends none',
    async (_, kernel) => {
      const app = await serveApp([], { cwd: project(kernel), env: PRODUCTION })
      try {
        const answer = await sendTo(app.port, 'GET', '/', { headers: HTTPS })
        expect(answer.status).toBe(200)
        expect(answer.headers['strict-transport-security']).toBeUndefined()
      } finally {
        await app.stop()
      }
    },
    60_000,
  )

  it('preload without includeSubDomains is one line at the kernel key and a hint; exit 1', async () => {
    const dir = project(`{ hsts: { maxAge: 31536000, preload: true } }`)
    const result = await runFw(['serve', '--port', '0'], { cwd: dir, env: PRODUCTION })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error fw.config.mjs:3:3: hsts.preload needs includeSubDomains: true (hstspreload.org) [FW_SERVE_CONFIG]',
      '  hint: Write hsts: true (max-age 15552000, 180 days), { maxAge: 31536000, includeSubDomains: true, preload: true }, or false.',
    ])
  }, 60_000)
})
