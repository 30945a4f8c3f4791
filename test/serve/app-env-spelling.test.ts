/**
 * APP_ENV is read as production whatever its case and surrounding spaces: `Production` (a
 * capital in a deploy setting, a stray space in a .env file) ran as development, silently, with
 * no JWT_SECRET check, no HTTPS redirect and error details allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isProduction } from '../../src/shared/app-env.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'
import { bootKernel, cleanupTempDirs } from '../runtime/kernel/support.js'

beforeAll(assertBuilt)
afterAll(() => {
  cleanupProjects()
  cleanupTempDirs()
})

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"

describe('APP_ENV spelled otherwise', () => {
  it.each(['Production', ' production', 'PRODUCTION\n'])(
    'fw serve with APP_ENV=%j refuses to start without a JWT_SECRET, as in production',
    async (value) => {
      const dir = makeProject({ 'routes.mjs': ROUTES })
      const { code, stderr } = await runFw(['serve', '--routes', 'routes.mjs', '--port', '0'], {
        cwd: dir,
        env: { APP_ENV: value, JWT_SECRET: '' },
      })
      expect(code).toBe(1)
      expect(lines(stderr)[0]).toBe(
        'error JWT_SECRET is not set; production needs at least 32 bytes [FW_SERVE_CONFIG]',
      )
    },
  )

  it('makes a kernel booted without an env option a production one (HTTPS redirect)', async () => {
    const before = process.env.APP_ENV
    process.env.APP_ENV = 'Production'
    try {
      const kernel = await bootKernel((r) => r.get('/', () => 'home'), { env: undefined })
      expect(kernel.env).toBe('production')
      const response = await kernel.handle(
        FwRequest.create({ uri: 'http://example.test/', headers: { host: 'example.test' } }),
      )
      expect([response.status, response.header('location')]).toEqual([301, 'https://example.test/'])
    } finally {
      if (before === undefined) delete process.env.APP_ENV
      else process.env.APP_ENV = before
    }
  })

  it('reads other values as they are', () => {
    expect([isProduction('production'), isProduction('staging'), isProduction(undefined)]).toEqual([
      true,
      false,
      false,
    ])
  })
})
