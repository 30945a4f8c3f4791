/**
 * The kernel's `cors` option written in fw.config.ts: `fw serve` answers a browser app's
 * preflight and request with it, and a setting that would not work (an origin with a trailing
 * slash, '*' with credentials, a misspelt option) stops it with one line naming the config
 * file, and a hint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'
import { sendTo, serveApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {\n  r.get('/api/users', () => [{ id: 1 }])\n}\n`

/** `fw serve` in a project with this config: the exit code and the stderr lines. */
async function serveWith(config: string) {
  const cwd = makeProject({ 'routes.ts': ROUTES, 'fw.config.ts': config })
  const result = await runFw(['serve', '--port', '0'], { cwd })
  return { code: result.code, lines: lines(result.stderr) }
}

describe('kernel.cors in fw.config.ts', () => {
  it('is what fw serve answers browsers with', async () => {
    const cwd = makeProject({
      'routes.ts': ROUTES,
      'fw.config.ts': `export default {\n  kernel: { cors: { origin: ['https://app.example.com'], maxAge: 600 } },\n}\n`,
    })
    const app = await serveApp([], { cwd })
    try {
      const origin = 'https://app.example.com'
      const preflight = await sendTo(app.port, 'OPTIONS', '/api/users', {
        headers: { origin, 'access-control-request-method': 'GET' },
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, HEAD',
        'access-control-max-age': '600',
      })
      const actual = await sendTo(app.port, 'GET', '/api/users', { headers: { origin } })
      expect(actual.json()).toEqual([{ id: 1 }])
      expect(actual.headers['access-control-allow-origin']).toBe(origin)
      expect(actual.headers.vary).toBe('Origin')
    } finally {
      await app.stop()
    }
  })

  it('refuses an origin with a trailing slash, naming the config file', async () => {
    const result = await serveWith(
      "export default {\n  kernel: {\n    cors: { origin: 'https://app.example.com/' },\n  },\n}\n",
    )
    expect(result.code).toBe(1)
    expect(result.lines).toEqual([
      'error fw.config.ts:2:3: cors.origin "https://app.example.com/" is not an origin: it ends with a slash, which an Origin never does [FW_SERVE_CONFIG]',
      "  hint: An origin is scheme://host[:port], as browsers send it: 'https://app.example.com'.",
    ])
  })

  it("refuses origin '*' with credentials: true, which browsers refuse", async () => {
    const result = await serveWith(
      "export default {\n  kernel: { cors: { origin: '*', credentials: true } },\n}\n",
    )
    expect(result.code).toBe(1)
    expect(result.lines).toEqual([
      "error fw.config.ts:2:3: cors.origin '*' cannot go with credentials: true [FW_SERVE_CONFIG]",
      "  hint: Browsers refuse a credentialed answer of '*'; list the origins that may send cookies (origin: ['https://app.example.com']), or drop credentials.",
    ])
  })

  it('refuses a misspelt cors option, naming the one it resembles', async () => {
    const result = await serveWith(
      "export default {\n  kernel: { cors: { origin: '*', exposeHeaders: ['X-Total'] } },\n}\n",
    )
    expect(result.code).toBe(1)
    expect(result.lines[0]).toBe(
      'error fw.config.ts:2:3: Kernel.boot() cors: unknown option `exposeHeaders` — did you mean `exposedHeaders`? [FW_SERVE_CONFIG]',
    )
  })
})
