/**
 * The registration interface takes the forms the specification defines, and refuses every other
 * one with an FW_* error at the call's file and line. Regressions: `r.get('/a', h, ['auth'])`
 * built a route without its middleware (the list was dropped), and `r.group(['/a'], cb)` failed
 * as FW_ROUTES_LOAD "path.startsWith is not a function".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError, type ErrorCode } from '../../src/shared/errors.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

const handler = (): null => null

/** Registers with locations on and returns the FwError thrown, checking code and location. */
function refusal(register: (r: Registrar) => void, code: ErrorCode): FwError {
  let caught: unknown
  try {
    collectRoutes(register, { captureLocations: true })
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected the registration to be refused').toBeInstanceOf(FwError)
  const error = caught as FwError
  expect(error.code).toBe(code)
  expect(error.hint).toBeTruthy()
  expect(error.location?.file).toMatch(/registration-forms\.test\.ts$/)
  return error
}

/** The line of this file that called `mark()`, to compare with an error's location. */
function lineOfCaller(): number {
  const stack = new Error().stack!.split('\n')[2]!
  return Number(/:(\d+):\d+\)?$/.exec(stack)![1])
}

describe('the third argument of a verb', () => {
  it('refuses a list (middleware must be { middleware } or withMiddleware), at its line', () => {
    let line = 0
    const error = refusal((r) => {
      line = lineOfCaller() + 1
      r.get('/a', handler, ['auth'] as never)
    }, 'FW_MIDDLEWARE_INVALID')
    expect(error.message).toBe(
      'GET /a: the third argument is a list (["auth"]); it takes a name or an options object',
    )
    expect(error.hint).toContain('{ middleware: [...] }')
    expect(error.location?.line).toBe(line)
  })

  it('takes an empty list as no options (PHP `[]`)', () => {
    const { routes } = collectRoutes((r) => r.get('/a', handler, [] as never))
    expect(routes[0]).toMatchObject({ name: null, middleware: [] })
  })

  it('refuses a value that is neither a name nor an options object', () => {
    expect(refusal((r) => r.get('/a', handler, 42 as never), 'FW_NAME_INVALID').message).toBe(
      'GET /a: the third argument must be a route name or an options object, got 42',
    )
  })

  it('refuses unknown option keys instead of dropping them', () => {
    const error = refusal(
      (r) => r.get('/a', handler, { name: 'a', middlewares: ['auth'] } as never),
      'FW_PATTERN_INVALID',
    )
    expect(error.message).toBe(
      'GET /a: the options have unknown key "middlewares" (known: name, middleware)',
    )
  })

  it('refuses a name or middleware of the wrong type', () => {
    refusal((r) => r.get('/a', handler, { name: 5 } as never), 'FW_NAME_INVALID')
    refusal((r) => r.get('/a', handler, { middleware: 5 } as never), 'FW_MIDDLEWARE_INVALID')
    refusal((r) => r.get('/a', handler).withName(5 as never), 'FW_NAME_INVALID')
  })

  it('takes null middleware in the options as none', () => {
    const { routes } = collectRoutes((r) => r.get('/a', handler, { middleware: null }))
    expect(routes[0]!.middleware).toEqual([])
  })
})

describe('the arguments of group()', () => {
  it('refuses a list as the first argument', () => {
    const error = refusal(
      (r) => r.group(['/a'] as never, (r) => r.get('/b', handler)),
      'FW_PATTERN_INVALID',
    )
    expect(error.message).toBe(
      'group(): the first argument is a list (["/a"]); it takes a prefix string or an options object',
    )
  })

  it('refuses a domain, middleware or name prefix of the wrong type', () => {
    const cb = (r: Registrar): void => void r.get('/b', handler)
    expect(
      refusal((r) => r.group('/a', ['x.example.com'] as never, cb), 'FW_PATTERN_INVALID').message,
    ).toBe('group(): the domain must be a string, got ["x.example.com"]')
    refusal((r) => r.group('/a', null, { a: 1 } as never, 'n.', cb), 'FW_MIDDLEWARE_INVALID')
    refusal((r) => r.group('/a', null, [], 5 as never, cb), 'FW_NAME_INVALID')
    refusal((r) => r.group({ prefix: 5 } as never, cb), 'FW_PATTERN_INVALID')
  })

  it('refuses unknown option keys instead of dropping them', () => {
    const error = refusal(
      (r) => r.group({ prefix: '/a', midleware: ['auth'] } as never, (r) => r.get('/b', handler)),
      'FW_PATTERN_INVALID',
    )
    expect(error.message).toContain('unknown key "midleware"')
  })

  it('refuses arguments after the callback, or between options and callback', () => {
    const cb = (r: Registrar): void => void r.get('/b', handler)
    refusal((r) => (r.group as (...a: unknown[]) => void)('/a', cb, 'x.'), 'FW_PATTERN_INVALID')
    refusal(
      (r) => (r.group as (...a: unknown[]) => void)({ prefix: '/a' }, 'x.', cb),
      'FW_PATTERN_INVALID',
    )
  })

  it('still takes every form the specification defines', () => {
    const { routes } = collectRoutes((r) => {
      r.group('/a', null, ['auth'], 'a.', (r) => r.get('/1', handler, 'one'))
      r.group('/b', null, 'auth', (r) => r.get('/2', handler, { name: 'two', middleware: null }))
      r.group({ prefix: '/c', middleware: 'auth', name: 'c.' }, (r) => r.get('/3', handler, '3'))
      r.group(null, (r) => r.get('/4', handler, null))
    })
    expect(routes.map((r) => [r.path, r.name, r.middleware])).toEqual([
      ['/a/1', 'a.one', ['auth']],
      ['/b/2', 'two', ['auth']],
      ['/c/3', 'c.3', ['auth']],
      ['/4', null, []],
    ])
  })
})

describe('through the CLI', () => {
  beforeAll(assertBuilt)
  afterAll(cleanupProjects)

  // The call sits on line 5, inside a group, after other registrations.
  it.each([
    [`r.get('/a', () => 1, ['auth'])`, 'FW_MIDDLEWARE_INVALID'],
    [`r.group(['/a'], (r) => { r.get('/b', () => 1) })`, 'FW_PATTERN_INVALID'],
    [`r.group('/a', null, [], 'a.', (r) => {}, 'extra')`, 'FW_PATTERN_INVALID'],
  ])('%s is an error at routes.ts:5, not dropped nor a TypeError', async (call, code) => {
    const routes = [
      'export default (r) => {',
      "  r.get('/ok', () => 1)",
      "  r.group({ prefix: '/g' }, (r) => {",
      "    r.get('/x', () => 1)",
      `    ${call}`,
      '  })',
      '}',
      '',
    ].join('\n')
    const dir = makeProject({ 'routes.ts': routes })
    const result = await runFw(['route:cache', 'build', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    const pattern = new RegExp(`^error routes\\.ts:5:\\d+: .*\\[${code}\\]$`)
    expect(lines(result.stderr)[0]).toMatch(pattern)
  })
})
