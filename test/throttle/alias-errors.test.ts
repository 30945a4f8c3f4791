/**
 * Malformed throttle aliases are build errors of `fw route:cache build`, with file:line, exit 1
 * and no cache written (the real binary; `npm test` builds it first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  runFw,
} from '../support/project.js'

const BUILD = ['route:cache', 'build', '--routes', 'routes.ts', '--cache', 'cache']

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw route:cache build on a malformed throttle alias', () => {
  it.each([
    // A group's alias is reported at the first route it applies to (route records carry the location).
    [
      'throttle:a,60',
      'a group',
      4,
      `r.group({ prefix: '/api', middleware: ['throttle:a,60'] }, (r) => {\n    r.get('/x', () => 'x')\n  })`,
    ],
    ['throttle:0,60', 'a route', 3, `r.get('/x', () => 'x', { middleware: 'throttle:0,60' })`],
    ['throttle:5,0', 'a route', 3, `r.get('/x', () => 'x').withMiddleware('throttle:5,0')`],
    ['throttle:x', 'a route', 3, `r.get('/x', () => 'x', { middleware: ['throttle:x'] })`],
    [
      'throttle:5,60,1',
      'a route',
      3,
      `r.get('/x', () => 'x', { middleware: ['throttle:5,60,1'] })`,
    ],
  ])('rejects %s on %s, naming routes.ts:%i', async (alias, _where, line, registration) => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home')\n  ${registration}\n}\n`,
    })
    const result = await runFw(BUILD, { cwd: dir })
    expect(result.code).toBe(1)
    const [error = '', hint = ''] = lines(result.stderr)
    expect(error).toMatch(new RegExp(`^error routes\\.ts:${line}:\\d+: `))
    expect(error).toContain(alias)
    expect(error).toContain('one or two positive integers')
    expect(error).toMatch(/\[FW_MIDDLEWARE_INVALID\]$/)
    expect(hint).toMatch(/^ {2}hint: \S/)
    expect(list(dir)).toEqual(['routes.ts'])
  })

  it('accepts a bare `throttle`, throttle:5 (per 60 s) and throttle:5,60', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home', { middleware: ['throttle'] })\n  r.get('/x', () => 'x', { middleware: ['throttle:5,60'] })\n  r.get('/y', () => 'y', { middleware: ['throttle:5'] })\n}\n`,
    })
    expect((await runFw(BUILD, { cwd: dir })).code).toBe(0)
  })
})
