/**
 * Audit 6 of the definition API, from routes.ts: a middleware list with a hole or a missing import
 * (`undefined`) is refused at the call that gave it, naming the entry, not later at a route that
 * inherited it with "middleware must be an alias string or a function"; a misuse inside a group
 * names the route by its full path (`GET /admin/u`, not `GET /u`); `withName(null)` says null.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

const handler = (): null => null

/** The FwError a registration throws (locations on). */
function refusal(register: (r: Registrar) => void): FwError {
  try {
    collectRoutes(register, { captureLocations: true })
  } catch (error) {
    expect(error).toBeInstanceOf(FwError)
    return error as FwError
  }
  throw new Error('expected the registration to be refused')
}

/** The line of this file that called it. */
function lineOfCaller(): number {
  return Number(/:(\d+):\d+\)?$/.exec(new Error().stack!.split('\n')[2]!)![1])
}

describe('middleware lists with holes', () => {
  it("refuses a group's undefined entry at the group's line, naming the entry", () => {
    let line = 0
    const error = refusal((r) => {
      line = lineOfCaller() + 1
      r.group('/x', null, ['auth', undefined] as never, 'x.', (r) => {
        r.get('/a', handler)
      })
    })
    expect(error.code).toBe('FW_MIDDLEWARE_INVALID')
    expect(error.message).toBe(
      'group(): the middleware must be a list of aliases or functions, got undefined at entry 2',
    )
    expect(error.location).toMatchObject({ file: expect.stringMatching(/audit-6-registration/) })
    expect(error.location?.line).toBe(line)
  })

  it('refuses a hole in withMiddleware() and in the options, naming the route', () => {
    const sparse = ['auth', , 'role:admin'] as never
    expect(refusal((r) => r.get('/a', handler).withMiddleware(sparse)).message).toBe(
      'GET /a: withMiddleware() must be a list of aliases or functions, got undefined at entry 2',
    )
    expect(refusal((r) => r.get('/a', handler).withMiddleware(42 as never)).code).toBe(
      'FW_MIDDLEWARE_INVALID',
    )
    expect(
      refusal((r) => r.get('/a', handler, { middleware: ['auth', null] } as never)).message,
    ).toBe('GET /a: the middleware must be a list of aliases or functions, got null at entry 2')
  })

  it('still takes lists of aliases and functions, and one alone', () => {
    // An import type here, not at the top: one more import line shifts the lines checked above.
    const fn: import('../../src/runtime/types.js').Middleware = (req, next) => next(req)
    const { routes } = collectRoutes((r) => {
      r.group({ middleware: ['auth', fn] }, (r) => r.get('/a', handler).withMiddleware(fn))
      r.get('/b', handler, { middleware: 'auth' }).withMiddleware(['role:a'])
    })
    expect(routes.map((route) => route.middleware)).toEqual([
      ['auth', fn, fn],
      ['auth', 'role:a'],
    ])
  })
})

describe('what errors call a route', () => {
  it('names a route in a group by its full path', () => {
    const error = refusal((r) => r.group('/admin', (r) => r.get('/u/{id}', handler, 5 as never)))
    expect(error.message).toBe(
      'GET /admin/u/{id}: the third argument must be a route name or an options object, got 5',
    )
  })

  it('says what withName() and a path got, null included', () => {
    expect(refusal((r) => r.get('/a', handler).withName(null as never)).message).toBe(
      'GET /a: withName() takes a string, got null',
    )
    expect(refusal((r) => r.get(42 as never, handler)).message).toBe(
      'GET route path must be a string, got 42',
    )
  })
})

describe('through the CLI', () => {
  beforeAll(assertBuilt)
  afterAll(cleanupProjects)

  it('reports a missing middleware import in a group at the group, exit 1', async () => {
    const dir = makeProject({
      'mw.ts': 'export const tenant = (req: unknown, next: (r: unknown) => unknown) => next(req)\n',
      'routes.ts': `import * as mw from './mw.js'
export default (r: any) => {
  r.group({ prefix: '/t', middleware: ['auth', (mw as any).tenat] }, (r: any) => {
    r.get('/a', () => 'a')
  })
}
`,
    })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe(
      'error routes.ts:3:5: group(): the middleware must be a list of aliases or functions, got undefined at entry 2 [FW_MIDDLEWARE_INVALID]',
    )
  })
})
