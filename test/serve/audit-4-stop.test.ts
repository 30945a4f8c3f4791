/**
 * `fw serve --workers` stops on SIGTERM even when the routes file left something open: the
 * primary runs the routes file too (to build the cache), so a timer it starts at load time kept
 * the primary running, its workers gone, until it was killed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { serveApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `// A module-level timer, as a metrics or cache-refresh module starts one.
setInterval(() => {}, 1000)
export default (r) => {
  r.get('/slow', () => {
    console.log('slow started')
    return new Promise((done) => setTimeout(() => done({ slow: true }), 500))
  }, 'slow')
}
`

describe('fw serve --workers, stopping', () => {
  it('exits 0 after SIGTERM when the routes file keeps a timer open, saying so, the in-flight request answered', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2'], { cwd: dir })
    const slow = fetch(`${app.url}/slow`)
    // In flight: a worker has started it.
    await expect.poll(() => app.output().includes('slow started'), { timeout: 10_000 }).toBe(true)
    const exited = app.stop()
    expect(await (await slow).json()).toEqual({ slow: true })
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r('still running 20 s after SIGTERM'), 20_000)),
    ])
    // Without the fix the primary would outlive the test: end it.
    if (code !== 0) process.kill(app.pid, 'SIGKILL')
    expect(code, app.output()).toBe(0)
    expect(app.output()).toMatch(
      /something the app opened was still open 5 s after the workers stopped; exiting\n$/,
    )
  }, 60_000)
})
