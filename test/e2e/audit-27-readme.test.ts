/**
 * The README followed word for word by a newcomer: the traps found doing so, run as the real
 * binary and server in temp apps.
 */
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  list,
  makeProject,
  REPO_ROOT,
  runFw,
} from '../support/project.js'
import { sendTo, serveApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => { r.get('/', () => 'home', 'home') }\n`

describe('fw route:cache clear', () => {
  it('refuses --watch, which only build takes, and removes nothing', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const built = await runFw(['route:cache', 'build', '--routes', 'routes.mjs'], { cwd: dir })
    expect(built.code).toBe(0)
    const before = list(join(dir, '.fw', 'cache'))

    const cleared = await runFw(['route:cache', 'clear', '--watch'], { cwd: dir })

    expect(cleared.code).toBe(1)
    expect(cleared.stderr).toContain('--watch')
    expect(cleared.stdout).not.toContain('cleared')
    expect(list(join(dir, '.fw', 'cache'))).toEqual(before)
  })
})

describe('an Auth of the app’s own (README "Authentication")', () => {
  // createAuth({ audience }) alone, as a newcomer first writes it: it reads no JWT_SECRET, so the
  // log must not say the variable is missing when it is set (it used to, in both environments).
  const routes = `import { authRoutes, createAuth, setDefaultAuth } from 'fw/auth'
setDefaultAuth(createAuth({ audience: 'api.example.com' }))
export default (r) => authRoutes(r)
`
  const appWithFw = (): string => {
    const dir = makeProject({ 'routes.mjs': routes })
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    return dir
  }
  const env = (dir: string): Record<string, string> => ({
    JWT_SECRET: 'a'.repeat(64),
    DATABASE_URL: `sqlite:${join(dir, 'app.db')}`,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  })

  it('says createAuth() was given no secret, not that a set JWT_SECRET is missing', async () => {
    const dir = appWithFw()
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: dir, env: env(dir) })
    try {
      const answer = await sendTo(app.port, 'POST', '/auth/login', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'whatever' }),
      })
      expect(answer.status).toBe(401)
    } finally {
      await app.stop()
    }
    expect(app.output()).toContain('createAuth() was given no secret')
    expect(app.output()).not.toContain('JWT_SECRET is not set')
  })

  it('in production, the boot error names createAuth() too', async () => {
    const dir = appWithFw()
    const started = serveApp(['--routes', 'routes.mjs'], {
      cwd: dir,
      env: { ...env(dir), APP_ENV: 'production' },
    })
    // fw serve checks JWT_SECRET itself (it is set); the app's Auth then refuses to build.
    const error: Error = await started.then(
      async (app) => {
        await app.stop()
        throw new Error(`fw serve started:\n${app.output()}`)
      },
      (refused: Error) => refused,
    )
    expect(error.message).toContain('fw serve exited with 1')
    expect(error.message).toContain('createAuth() was given no secret')
    expect(error.message).not.toContain('JWT_SECRET is not set')
  })
})
