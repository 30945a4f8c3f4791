/**
 * Regression: a routes or config file can throw anything, and fw's error printing read it as an
 * Error: `throw Object.create(null)` from a timer ended `fw route:cache build` with Node's stack
 * of fw's own TypeError ("Cannot convert object to primitive value", exit 7); thrown by the
 * routes function it was "this looks like a bug in fw"; `throw null` printed fw's "Cannot read
 * properties of null (reading 'code')"; an Error whose stack is no string, "stack.split is not a
 * function". Each is now the user error it is: one line at the routes file, a hint, exit 1.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

afterAll(cleanupProjects)

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"
const BUILD = ['route:cache', 'build', '--routes', 'routes.ts', '--cache', 'cache']

/** Builds `routes` (and an fw.config.ts when given): exit code and the stderr lines. */
async function build(routes: string, config?: string) {
  const files: Record<string, string> = { 'routes.ts': routes }
  if (config !== undefined) files['fw.config.ts'] = config
  // Without --routes and --cache, so the config is read.
  const args = config === undefined ? BUILD : BUILD.slice(0, 2)
  const result = await runFw(args, { cwd: makeProject(files) })
  return { code: result.code, lines: lines(result.stderr) }
}

describe('a thrown value that is no ordinary Error', () => {
  it('from a timer or a promise is the uncaught-error line, not Node’s stack', async () => {
    const timer = await build(`setTimeout(() => {\n  throw Object.create(null)\n}, 0)\n${ROUTES}`)
    expect(timer.code).toBe(1)
    expect(timer.lines[0]).toBe('error Uncaught exception: [object Object] [FW_APP_UNCAUGHT]')
    expect(timer.lines).toHaveLength(2)
    const rejected = await build(`Promise.reject(Object.create(null))\n${ROUTES}`)
    expect(rejected.code).toBe(1)
    expect(rejected.lines[0]).toBe(
      'error Unhandled promise rejection: [object Object] [FW_APP_UNCAUGHT]',
    )
  })

  it('from the routes file is the routes file’s error, with what it threw', async () => {
    const cases: Array<[string, string]> = [
      [`throw null\n${ROUTES}`, 'loaded: null'],
      ['export default () => {\n  throw Object.create(null)\n}\n', 'run: [object Object]'],
      [
        "export default () => {\n  const e = new Error('m')\n  e.stack = 42\n  throw e\n}\n",
        'run: m',
      ],
      [
        "export default () => {\n  const e = new Error('m')\n  Object.defineProperty(e, 'message', { get() { throw 1 } })\n  throw e\n}\n",
        'run: [object Error]',
      ],
    ]
    for (const [routes, threw] of cases) {
      const result = await build(routes)
      expect(result.code).toBe(1)
      expect(result.lines[0]).toBe(
        `error routes.ts:1:1: The routes file threw while it was ${threw} [FW_ROUTES_LOAD]`,
      )
      expect(result.lines[1]).toMatch(/^ {2}hint: Fix the error in your routes file/)
      expect(result.lines).toHaveLength(2)
    }
  })

  it('from fw.config.ts is the config file’s error', async () => {
    for (const [thrown, shown] of [
      ['null', 'null'],
      ['Object.create(null)', '[object Object]'],
    ]) {
      const result = await build(ROUTES, `throw ${thrown}\n`)
      expect(result.code).toBe(1)
      expect(result.lines[0]).toBe(
        `error fw.config.ts:1:1: The config file threw while it was loaded: ${shown} [FW_CONFIG_INVALID]`,
      )
      expect(result.lines).toHaveLength(2)
    }
  })
})
