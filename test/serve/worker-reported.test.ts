/**
 * A worker of `fw serve --workers` that cannot start prints its error, and tells the primary so
 * (an IPC message), which then adds none of its own; a worker that exits without a word (the
 * app's own `process.exit`, with whatever code) still gets the primary's FW_SERVE_WORKER error.
 * An exit code as the mark (78, for a while) took an app's own exit 78 for "said why": no error
 * was printed at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"

describe('a worker that stops while starting', () => {
  it.each([1, 78])(
    'by the app’s own exit (code %i) is reported by the primary',
    async (code) => {
      const dir = makeProject({
        'routes.mjs': `import cluster from 'node:cluster'\nif (cluster.isWorker) process.exit(${code})\n${ROUTES}`,
      })
      const result = await runFw(
        ['serve', '--routes', 'routes.mjs', '--workers', '2', '--port', '0'],
        { cwd: dir, env: { JWT_SECRET: 'x'.repeat(40) } },
      )
      expect(result.code).toBe(1)
      expect(lines(result.stderr)).toEqual([
        `error A worker stopped while starting (exit code ${code}) [FW_SERVE_WORKER]`,
        '  hint: Its own error, if it printed one, is above; no worker is left running.',
      ])
    },
    60_000,
  )
})
