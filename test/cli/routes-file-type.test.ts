/**
 * Regression: `--routes routes.txt` holding a valid routes function said "has no default export
 * function": esbuild reads a .txt file as text, whose default export is a string. The error now
 * names the cause, the file's name, and the names fw reads as code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = "export default (r) => {\n  r.get('/', () => 'home')\n}\n"

describe('a routes file whose name is no code file', () => {
  it('is refused for its name, and the same code builds under a .ts or extensionless name', async () => {
    const dir = makeProject({ 'routes.txt': ROUTES, 'routes.mts': ROUTES, routes: ROUTES })
    const text = await runFw(['route:cache', 'build', '--routes', 'routes.txt'], { cwd: dir })
    expect(text.code).toBe(1)
    expect(lines(text.stderr)).toEqual([
      'error routes.txt:1:1: routes.txt is no JavaScript or TypeScript file, so it exports no routes function [FW_ROUTES_NO_DEFAULT]',
      '  hint: Give the routes file a .ts, .mts, .cts, .js, .mjs or .cjs name, e.g. routes.ts.',
    ])
    for (const name of ['routes.mts', 'routes']) {
      const built = await runFw(
        ['route:cache', 'build', '--routes', name, '--cache', `c-${name}`],
        {
          cwd: dir,
        },
      )
      expect(built.code, built.stderr).toBe(0)
    }
  })
})
