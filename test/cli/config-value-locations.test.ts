/**
 * Regression: a bad value fw.config.ts gives (PORT, JWT_SECRET, DATABASE_URL, cache) was reported
 * without the line of the config that sets it, and a refused `cache` said to change a --cache
 * never given. Each error now names `fw.config.ts:line:column`, as the config's other errors do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"

/** Runs `args` in a project with this config; the exit code and the stderr lines. */
async function withConfig(config: string, args: string[], input?: string) {
  const cwd = makeProject({ 'routes.ts': ROUTES, 'fw.config.ts': config })
  const result = await runFw(args, { cwd, ...(input === undefined ? {} : { input }) })
  return { code: result.code, lines: lines(result.stderr) }
}

describe('a bad value from fw.config.ts', () => {
  it('names the line of PORT, and of JWT_SECRET in production', async () => {
    const port = await withConfig("export default {\n  env: {\n    PORT: 'abc',\n  },\n}\n", [
      'serve',
    ])
    expect(port.code).toBe(1)
    expect(port.lines[0]).toBe(
      'error fw.config.ts:3:5: PORT=abc (from fw.config.ts) is not a port number [FW_SERVE_CONFIG]',
    )
    const secret = await withConfig(
      "export default {\n  APP_ENV: 'production',\n  JWT_SECRET: 'short',\n}\n",
      ['serve', '--port', '0'],
    )
    expect(secret.code).toBe(1)
    expect(secret.lines[0]).toMatch(
      /^error fw\.config\.ts:3:3: JWT_SECRET from fw\.config\.ts is only 5 bytes; .* \[FW_SERVE_CONFIG\]$/,
    )
  })

  it('names the line of DATABASE_URL for fw user:create', async () => {
    const result = await withConfig(
      "export default {\n  DATABASE_URL: 'garbage',\n}\n",
      ['user:create', '--email', 'ada@example.com', '--name', 'Ada', '--password-stdin'],
      'correct horse battery staple\n',
    )
    expect(result.code).toBe(1)
    expect(result.lines[0]).toMatch(
      /^error fw\.config\.ts:2:3: Unsupported DATABASE_URL "garbage": .* \[FW_USER_INVALID\]$/,
    )
  })

  it('names the line of a REDIS_URL that is no Redis URL, its password masked', async () => {
    const result = await withConfig(
      "export default {\n  REDIS_URL: 'redis://app:s3cret@localhost:badport',\n}\n",
      ['serve', '--port', '0'],
    )
    expect(result.code).toBe(1)
    expect(result.lines).toEqual([
      'error fw.config.ts:2:3: REDIS_URL "redis://***@localhost:badport" (from fw.config.ts) is not a Redis URL: it is no URL [FW_SERVE_CONFIG]',
      '  hint: Use redis://[user:password@]host:port[/db] (rediss:// for TLS), or unset it for in-memory stores (set in fw.config.ts).',
    ])
    const scheme = await withConfig(
      "export default {\n  REDIS_URL: 'http://localhost:6379',\n}\n",
      ['serve', '--port', '0'],
    )
    expect(scheme.lines[0]).toMatch(
      /is not a Redis URL: its scheme is http:, not redis: or rediss:/,
    )
  })

  it('names the line of a cache folder fw refuses, and says to fix it there', async () => {
    for (const command of [['route:cache', 'build'], ['route:cache', 'clear'], ['serve']]) {
      const result = await withConfig("export default {\n  cache: '/',\n}\n", command)
      expect(result.code).toBe(1)
      expect(result.lines).toEqual([
        'error fw.config.ts:2:3: Refusing to use "/" as the route cache directory [FW_CACHE_UNSAFE_DIR]',
        '  hint: Point cache in fw.config.ts at a folder of its own, such as .fw/cache.',
      ])
    }
  })

  it('names the line that wins: under env rather than at the top, never a comment', async () => {
    const config = [
      '// PORT: set in the deployment',
      'export default {',
      "  JWT_SECRET: 'x'.repeat(40), APP_ENV: 'production',",
      "  env: { APP_PORT: 1, JWT_SECRET: 'short' },",
      '}',
    ].join('\n')
    const result = await withConfig(config, ['serve', '--port', '0'])
    expect(result.code).toBe(1)
    expect(result.lines[0]).toMatch(
      /^error fw\.config\.ts:4:23: JWT_SECRET from fw\.config\.ts is only 5 bytes; /,
    )
  })

  it('takes only an `env: {` block as the variables, not a kernel option or a comment', async () => {
    const config = [
      'export default {',
      "  kernel: { env: 'production' },",
      "  APP_ENV: 'production', // env: see the notes",
      "  JWT_SECRET: 'x'.repeat(40),",
      '  env: {',
      "    JWT_SECRET: 'short', // 'postgres://a@b/c' is no comment",
      '  },',
      '}',
    ].join('\n')
    const result = await withConfig(config, ['serve', '--port', '0'])
    expect(result.code).toBe(1)
    expect(result.lines[0]).toMatch(
      /^error fw\.config\.ts:6:5: JWT_SECRET from fw\.config\.ts is only 5 bytes; /,
    )
  })
})
