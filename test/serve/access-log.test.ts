/**
 * `fw serve`'s access log: off unless `--access-log` or fw.config.ts's `kernel.accessLog` turns it
 * on, and `--no-access-log` turns the config's off. Its lines come after the banner, which tests
 * and scripts read first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { sendTo, serveApp, type ServedApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {
  r.get('/users/{id}', (req, id) => ({ id }), 'users.show')
  r.get('/boom', () => { throw new Error('marker-boom') }, 'boom')
}
`
const PRODUCTION = { APP_ENV: 'production', JWT_SECRET: 'p'.repeat(40) }
// Loopback is a trusted proxy by default: this passes production's HTTPS redirect.
const HTTPS = { 'x-forwarded-proto': 'https' }

/** The JSON lines of `output` (the banner and other text left out). */
function jsonLines(output: string): Record<string, any>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>)
}

/**
 * GET /users/42, then GET /boom, whose error line is logged before its answer: once it is in the
 * output, the first request's access line (logged as its response closed, before the second
 * request was sent) is there too, if there is one. With the access log on (`logged`), the wait
 * is for the second request's access line, logged once its answer was sent.
 */
async function twoRequests(app: ServedApp, logged: boolean): Promise<Record<string, any>[]> {
  expect((await sendTo(app.port, 'GET', '/users/42?page=2', { headers: HTTPS })).status).toBe(200)
  expect((await sendTo(app.port, 'GET', '/boom', { headers: HTTPS })).status).toBe(500)
  const last = logged ? 'request errored' : 'marker-boom'
  await expect.poll(() => app.output().includes(last), { timeout: 10_000 }).toBe(true)
  return jsonLines(app.output()).filter((line) => /^request (completed|errored)$/.test(line.msg))
}

async function served(
  files: Record<string, string>,
  env: Record<string, string>,
  args: string[] = [],
  logged = false,
): Promise<Record<string, any>[]> {
  const dir = makeProject({ 'routes.mjs': ROUTES, ...files })
  const app = await serveApp(['--routes', 'routes.mjs', ...args], {
    cwd: dir,
    env: { LOG_LEVEL: 'info', LOG_FORMAT: 'json', APP_ENV: 'development', ...env },
  })
  try {
    // The banner is the first line still.
    expect(app.output().split('\n')[0]).toMatch(/^fw serve → http:\/\//)
    return await twoRequests(app, logged)
  } finally {
    await app.stop()
  }
}

describe('fw serve access log', () => {
  it('is off by default', async () => {
    expect(await served({}, {})).toEqual([])
  })

  it('--access-log turns it on: a JSON line per request, after the banner', async () => {
    const lines = await served({}, {}, ['--access-log'], true)
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: '/users/42?page=2', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
    })
    expect(lines[0]!.req.id).toMatch(/^[0-9a-f-]{36}$/)
    // A 500 is "request errored", naming what failed; its stack is on the error line only.
    expect(lines[1]).toMatchObject({
      level: 30,
      msg: 'request errored',
      req: { url: '/boom' },
      res: { statusCode: 500 },
      err: { type: 'Error', message: 'marker-boom' },
    })
    expect(lines[1]!.err).not.toHaveProperty('stack')
  })

  it('kernel.accessLog in fw.config.ts turns it on, in production too; --no-access-log off', async () => {
    const config = { 'fw.config.mjs': 'export default { kernel: { accessLog: true } }\n' }
    const lines = await served(config, PRODUCTION, [], true)
    expect(lines[0]).toMatchObject({ req: { url: '/users/42?page=2' }, res: { statusCode: 200 } })
    expect(await served(config, PRODUCTION, ['--no-access-log'])).toEqual([])
  })

  it('says where a kernel.accessLog that is not a boolean is written', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.mjs': "export default {\n  kernel: { accessLog: 'no' },\n}\n",
    })
    await expect(serveApp(['--routes', 'routes.mjs'], { cwd: dir })).rejects.toThrow(
      /fw\.config\.mjs:2:\d+: accessLog must be true or false, not "no"/,
    )
  })
})
