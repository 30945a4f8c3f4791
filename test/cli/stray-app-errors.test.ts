/**
 * An error the app's own code throws where nothing catches it while a command loads the routes
 * (a timer of the routes file, a promise nobody awaits) ended the command with Node's raw stack
 * and no hint. It is printed as every user error is: one line at the place it was thrown, a hint,
 * exit 1; the stack only with --debug.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

afterAll(cleanupProjects)

const HINT =
  /^ {2}hint: A timer, event listener or promise of the app failed where nothing catches it/

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"

describe('an error of the app that nothing catches', () => {
  it('is one line at the throwing line of the routes file, for build and serve', async () => {
    const dir = makeProject({
      'routes.ts': `setTimeout(() => {\n  throw new Error('boom from a timer')\n}, 0)\n${ROUTES}`,
      // The routes' temporary bundle then goes to node_modules/.cache/fw (temp-bundle.ts).
      'node_modules/.keep': '',
    })
    const bundles = join(dir, 'node_modules', '.cache', 'fw')
    for (const args of [
      ['route:cache', 'build', '--cache', 'cache'],
      ['serve', '--port', '0'],
    ]) {
      const result = await runFw([...args, '--routes', 'routes.ts'], { cwd: dir })
      expect(result.code).toBe(1)
      const [error, hint, ...rest] = lines(result.stderr)
      expect(error).toBe(
        'error routes.ts:2:9: Uncaught exception: boom from a timer [FW_APP_UNCAUGHT]',
      )
      expect(hint).toMatch(HINT)
      expect(rest).toEqual([])
      // The timer ended the process while the bundle was being removed: it was left behind.
      expect(existsSync(bundles) ? readdirSync(bundles) : []).toEqual([])
    }
  })

  it('names the module the routes file imports that rejected a promise', async () => {
    const dir = makeProject({
      'db.ts': "export const ready = Promise.reject(new Error('connection refused'))\n",
      'routes.ts': `import './db'\n${ROUTES}`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    const [error, hint, ...rest] = lines(result.stderr)
    expect(error).toBe(
      'error db.ts:1:37: Unhandled promise rejection: connection refused [FW_APP_UNCAUGHT]',
    )
    expect(hint).toMatch(HINT)
    expect(rest).toEqual([])
  })

  it('prints what the app threw, without a place, when it is no Error', async () => {
    const dir = makeProject({
      'routes.ts': `setTimeout(() => {\n  throw 'a string'\n}, 0)\n${ROUTES}`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe('error Uncaught exception: a string [FW_APP_UNCAUGHT]')
  })

  it('prints the stack of what the app threw with --debug', async () => {
    const dir = makeProject({
      'routes.ts': `setTimeout(() => {\n  throw new Error('boom from a timer')\n}, 0)\n${ROUTES}`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts', '--debug'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^Error: boom from a timer\n\s+at .*routes\.ts:2:9/m)
  })
})
