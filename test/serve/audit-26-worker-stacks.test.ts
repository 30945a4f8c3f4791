/**
 * `fw serve --workers`, audit 26: a worker's logged stacks name the app's own files and lines,
 * as a single process's do, not lines of the bundled routes.mjs in the cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { serveApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `type Order = { id: number }
export default (r: any) => {
  r.get('/crash', (): Order => { throw new Error('boom in a worker') })
}
`

describe('fw serve --workers, audit 26', () => {
  it("logs a worker's error with the stack of the routes file, through its source map", async () => {
    const dir = makeProject({ 'routes.ts': ROUTES })
    const env = { LOG_LEVEL: 'error', LOG_FORMAT: 'json' }
    const app = await serveApp(['--routes', 'routes.ts', '--workers', '2'], { cwd: dir, env })
    try {
      expect((await fetch(`${app.url}/crash`)).status).toBe(500)
      const until = Date.now() + 9_000
      while (!app.output().includes('boom in a worker') && Date.now() < until)
        await new Promise((done) => setTimeout(done, 50))
    } finally {
      await app.stop()
    }
    const line = app
      .output()
      .split('\n')
      .find((l) => l.includes('boom in a worker'))
    const stack: string = JSON.parse(line!).err.stack
    expect(stack.split('\n')[1]).toMatch(/routes\.ts:3:\d+\)?$/)
    expect(stack).not.toMatch(/routes\.mjs/)
  })
})
