/**
 * APP_ENV is read as production whatever its case and surrounding spaces: `Production` (a
 * capital in a deploy setting, a stray space in a .env file) ran as development, silently, with
 * no JWT_SECRET check, no HTTPS redirect and error details allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appEnvWarning, isProduction } from '../../src/shared/app-env.js'
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

describe('the kernel env option spelled otherwise', () => {
  const home = (r: import('../../src/define/registrar.js').Registrar): void =>
    void r.get('/', () => 'home')

  it('reads env: " Production " (a fw.config.js is not type-checked) as production', async () => {
    const kernel = await bootKernel(home, { env: ' Production ' as 'production' })
    expect(kernel.env).toBe('production')
    const response = await kernel.handle(
      FwRequest.create({ uri: 'http://example.test/', headers: { host: 'example.test' } }),
    )
    expect([response.status, response.header('location')]).toEqual([301, 'https://example.test/'])
  })

  it('fw serve with kernel.env of another type than a string: one error line, not a crash', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.mjs': 'export default { kernel: { env: 1 } }\n',
    })
    const { code, stderr } = await runFw(['serve', '--routes', 'routes.mjs', '--port', '0'], {
      cwd: dir,
      env: { APP_ENV: '' },
    })
    expect(code).toBe(1)
    expect(stderr).not.toMatch(/bug in fw/)
    expect(lines(stderr)[0]).toMatch(/env must be 'production', 'development' or 'test', not 1/)
  })

  it('refuses to boot with an env it does not know, rather than run as development', async () => {
    await expect(bootKernel(home, { env: 'prod' as 'production' })).rejects.toThrow(
      `env must be 'production', 'development' or 'test', not "prod"`,
    )
  })

  it('fw serve with kernel.env "Production" in fw.config.mjs refuses to start without a JWT_SECRET', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.mjs': "export default { kernel: { env: 'Production' } }\n",
    })
    const { code, stderr } = await runFw(['serve', '--routes', 'routes.mjs', '--port', '0'], {
      cwd: dir,
      env: { APP_ENV: '', JWT_SECRET: '' },
    })
    expect(code).toBe(1)
    expect(lines(stderr)[0]).toBe(
      'error JWT_SECRET is not set; production needs at least 32 bytes [FW_SERVE_CONFIG]',
    )
  })
})

describe('an APP_ENV that runs as development though it may not be meant to', () => {
  it('is said once, at the first boot, in the kernel log', async () => {
    const before = process.env.APP_ENV
    process.env.APP_ENV = 'prod'
    const warnings: unknown[] = []
    const log = { debug() {}, info() {}, error() {}, warn: (o: unknown) => void warnings.push(o) }
    try {
      const kernel = await bootKernel((r) => r.get('/', () => 'home'), { env: undefined, log })
      await bootKernel((r) => r.get('/', () => 'home'), { env: undefined, log })
      expect(kernel.env).toBe('development')
    } finally {
      if (before === undefined) delete process.env.APP_ENV
      else process.env.APP_ENV = before
    }
    expect(warnings).toEqual([
      'APP_ENV="prod" runs as development (no HTTPS redirect, no JWT_SECRET check, error details allowed): only APP_ENV=production is production',
    ])
  })

  it('is not said for the names of development environments', () => {
    expect(
      ['development', 'dev', 'local', 'test', ' Testing ', ''].map((v) => appEnvWarning(v)),
    ).toEqual([null, null, null, null, null, null])
    expect(appEnvWarning('staging')).toMatch(/^APP_ENV="staging" runs as development/)
  })
})
