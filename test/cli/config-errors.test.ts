/**
 * Errors about fw.config.ts are FW_CONFIG_INVALID and send the user to that file (also when it
 * does not compile), and fw serve's JWT_SECRET check says when the secret came from the config
 * file, which wins over the environment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyConfigEnv, readConfig } from '../../src/cli/config.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {\n  r.get('/', () => 'home')\n}\n`

describe('a fw.config.ts that does not compile', () => {
  it('is FW_CONFIG_INVALID at its file and line, with a hint about fw.config.ts', async () => {
    const dir = makeProject({
      'routes.ts': ROUTES,
      'fw.config.ts': `export default {\n  routes: 'routes.ts'\n  cache: 'x'\n}\n`,
    })
    const result = await runFw(['routes:list'], { cwd: dir })
    expect(result.code).toBe(1)
    const [error, hint, ...rest] = lines(result.stderr)
    expect(rest).toEqual([])
    expect(error).toMatch(/^error fw\.config\.ts:3:3: .*\[FW_CONFIG_INVALID\]$/)
    expect(hint).toMatch(/^ {2}hint: Fix fw\.config\.ts so that it compiles/)
  })

  it('names the imported file that has the error', async () => {
    const dir = makeProject({
      'routes.ts': ROUTES,
      'fw.config.ts': `import { cache } from './settings.ts'\nexport default { cache }\n`,
      'settings.ts': `export const cache = 'x'\n)\n`,
    })
    const result = await runFw(['routes:list'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^error settings\.ts:2:1: .*\[FW_CONFIG_INVALID\]$/),
      expect.stringMatching(
        /^ {2}hint: Fix settings\.ts \(imported by fw\.config\.ts\) so that it compiles/,
      ),
    ])
  })

  it('importing a package that is not installed is FW_CONFIG_INVALID too', async () => {
    const dir = makeProject({
      'routes.ts': ROUTES,
      'fw.config.ts': `import x from 'no-such-package-fw-test'\nexport default { x }\n`,
    })
    await expect(readConfig(dir)).rejects.toMatchObject({
      code: 'FW_CONFIG_INVALID',
      location: { line: 1 },
      message: expect.stringContaining(
        "imports the package 'no-such-package-fw-test', which is not installed",
      ),
    })
  })
})

describe('applyConfigEnv', () => {
  it('records which variables the config file set, and clears a stale record', async () => {
    const dir = makeProject({
      'fw.config.mjs': `export default { JWT_SECRET: 'short', env: { OTHER: 1 } }\n`,
    })
    const env: NodeJS.ProcessEnv = { JWT_SECRET: 'from-env' }
    applyConfigEnv(await readConfig(dir), env)
    expect(env).toMatchObject({
      JWT_SECRET: 'short',
      OTHER: '1',
      FW_CONFIG_VARS: 'JWT_SECRET,OTHER',
    })
    expect(env.FW_CONFIG_FILE).toMatch(/fw\.config\.mjs$/)
    applyConfigEnv({}, env)
    expect(env.FW_CONFIG_VARS).toBeUndefined()
    expect(env.FW_CONFIG_FILE).toBeUndefined()
  })
})

describe('fw serve in production with a short JWT_SECRET', () => {
  it('from fw.config.ts says so, and sends the user to that file', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.ts': `export default { routes: 'routes.mjs', APP_ENV: 'production', JWT_SECRET: 'short' }\n`,
    })
    const result = await runFw(['serve', '--port', '0'], {
      cwd: dir,
      env: { JWT_SECRET: 'x'.repeat(40) },
    })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error fw.config.ts:1:63: JWT_SECRET from fw.config.ts is only 5 bytes; production needs at least 32 bytes [FW_SERVE_CONFIG]',
      expect.stringMatching(
        /^ {2}hint: Change JWT_SECRET in fw\.config\.ts \(it wins over the environment\)/,
      ),
    ])
  })

  it('from the environment still says to set JWT_SECRET', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.ts': `export default { routes: 'routes.mjs', APP_ENV: 'production' }\n`,
    })
    const result = await runFw(['serve', '--port', '0'], { cwd: dir, env: { JWT_SECRET: 'short' } })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error JWT_SECRET is only 5 bytes; production needs at least 32 bytes [FW_SERVE_CONFIG]',
      expect.stringMatching(/^ {2}hint: Set JWT_SECRET to 32 or more random bytes/),
    ])
  })
})
