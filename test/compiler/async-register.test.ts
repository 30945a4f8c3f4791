/**
 * An async routes function (or group callback) would lose every route it registers after an
 * await: the compiler, collectRoutes and Kernel.boot refuse it with FW_ROUTES_ASYNC, and its later
 * rejection cannot crash the process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { Kernel } from '../../src/runtime/kernel.js'
import { silentLogger } from '../../src/runtime/logger.js'
import { buildCacheFor, cleanupTempDirs } from '../runtime/kernel/support.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(() => {
  cleanupProjects()
  cleanupTempDirs()
})

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms))

describe('fw routes:list and route:cache build on an async routes function', () => {
  it('refuse it with one FW_ROUTES_ASYNC line at the default export, rather than listing part of the routes', async () => {
    const dir = makeProject({
      'routes.ts': `const later = () => new Promise((done) => setTimeout(done, 50))\n\nexport default async (r) => {\n  r.get('/a', () => 'a')\n  await later()\n  r.get('/b', () => 'b')\n}\n`,
    })
    for (const args of [['routes:list'], ['route:cache', 'build', '--cache', 'cache']]) {
      const result = await runFw([...args, '--routes', 'routes.ts'], { cwd: dir })
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      const [error, hint, ...rest] = lines(result.stderr)
      expect(rest).toEqual([])
      expect(error).toMatch(
        /^error routes\.ts:3:1: The default export of routes\.ts returned a promise .*\[FW_ROUTES_ASYNC\]$/,
      )
      expect(hint).toMatch(
        /^ {2}hint: Register routes synchronously.*top-level await in the routes module is fine/,
      )
    }
  })

  it('print no raw stack when it throws after an await', async () => {
    const dir = makeProject({
      'routes.ts': `export default async (r) => {\n  r.get('/a', () => 'a')\n  await new Promise((done) => setTimeout(done, 50))\n  throw new Error('late failure')\n}\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(lines(result.stderr)).toHaveLength(2)
    expect(result.stderr).toMatch(/\[FW_ROUTES_ASYNC\]/)
    expect(result.stderr).not.toMatch(/late failure|^\s+at /m)
  })

  it('refuse an async group callback at the group', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home')\n  r.group('/api', async (r) => {\n    await null\n    r.get('/users', () => [])\n  })\n}\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toMatch(
      /^error routes\.ts:3:\d+: A group callback returned a promise .*\[FW_ROUTES_ASYNC\]$/,
    )
  })

  it('still accept top-level await in the routes module', async () => {
    const dir = makeProject({
      'routes.ts': `const prefix = await Promise.resolve('/v1')\nexport default (r) => {\n  r.get(prefix + '/a', () => 'a')\n}\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts', '--json'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject([{ path: '/v1/a' }])
  })
})

describe('at run time', () => {
  const asyncRoutes =
    (failLater: boolean) =>
    async (r: Registrar): Promise<void> => {
      r.get('/a', () => 'a')
      await sleep(20)
      if (failLater) throw new Error('late failure')
      r.get('/b', () => 'b')
    }

  it('collectRoutes refuses an async routes function', () => {
    expect(() => collectRoutes(asyncRoutes(false))).toThrow(
      expect.objectContaining({ code: 'FW_ROUTES_ASYNC' }),
    )
  })

  it('Kernel.boot rejects instead of booting without the routes registered after the await', async () => {
    // A cache that matches what the function registers before its await.
    const dir = await buildCacheFor((r) => r.get('/a', () => 'a'))
    await expect(
      Kernel.boot({
        routeCache: dir,
        register: asyncRoutes(false),
        log: silentLogger,
        signingKeys: ['k'],
      }),
    ).rejects.toMatchObject({
      code: 'FW_ROUTES_ASYNC',
      message: expect.stringMatching(/^The routes function returned a promise/),
    })
  })

  it("catches the refused function's later rejection (no unhandled rejection)", async () => {
    const unhandled: unknown[] = []
    const note = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', note)
    try {
      expect(() => collectRoutes(asyncRoutes(true))).toThrow(
        expect.objectContaining({ code: 'FW_ROUTES_ASYNC' }),
      )
      await sleep(100)
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', note)
    }
  })
})

describe('a registration made after the routes function returned', () => {
  it('fails the build with one FW_ROUTES_LATE line at the late call, instead of leaving the route out', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/a', () => 'a')\n  Promise.resolve().then(() => r.get('/b', () => 'b'))\n}\n`,
    })
    for (const args of [['routes:list'], ['route:cache', 'build', '--cache', 'cache']]) {
      const result = await runFw([...args, '--routes', 'routes.ts'], { cwd: dir })
      expect(result.code).toBe(1)
      const [error, hint, ...rest] = lines(result.stderr)
      expect(rest).toEqual([])
      expect(error).toMatch(
        /^error routes\.ts:3:\d+: get\("\/b"\) was called after the routes function returned: it is not in the route table \[FW_ROUTES_LATE\]$/,
      )
      expect(hint).toMatch(/^ {2}hint: Register every route while the routes function runs/)
    }
  })

  it('also from a timer', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/a', () => 'a')\n  setTimeout(() => r.group('/late', (r) => r.get('/b', () => 'b')), 0)\n}\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toMatch(/^error routes\.ts:3:\d+: group\(\) was called after/)
    expect(result.stderr).not.toMatch(/^\s+at /m)
  })

  it('also from a timer that fires a second later, as after a slow database query', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/a', () => 'a')\n  setTimeout(() => r.get('/b', () => 'b'), 1000)\n}\n`,
    })
    const result = await runFw(
      ['route:cache', 'build', '--routes', 'routes.ts', '--cache', 'cache'],
      {
        cwd: dir,
      },
    )
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toMatch(
      /^error routes\.ts:3:\d+: get\("\/b"\) was called after/,
    )
  })

  it('throws from every registering call of a collected registrar and its routes', () => {
    let saved = undefined as Registrar | undefined
    let route = undefined as ReturnType<Registrar['get']> | undefined
    const registrar = collectRoutes((r) => {
      saved = r
      route = r.get('/a', () => 'a')
    })
    const late = expect.objectContaining({ code: 'FW_ROUTES_LATE' })
    expect(() => saved!.post('/b', () => 'b')).toThrow(late)
    expect(() => saved!.group('/g', () => {})).toThrow(late)
    expect(() => saved!.alias('tenant', (req, next) => next(req))).toThrow(late)
    expect(() => route!.withName('a')).toThrow(late)
    expect(() => route!.withMiddleware('auth')).toThrow(late)
    expect(registrar.routes).toHaveLength(1)
    expect(registrar.routes[0]).toMatchObject({ path: '/a', name: null, middleware: [] })
  })

  it('throws after Kernel.boot collected the routes', async () => {
    const dir = await buildCacheFor((r) => r.get('/a', () => 'a'))
    let saved = undefined as Registrar | undefined
    await Kernel.boot({
      routeCache: dir,
      register: (r) => {
        saved = r
        r.get('/a', () => 'a')
      },
      log: silentLogger,
      signingKeys: ['k'],
    })
    expect(() => saved!.get('/b', () => 'b')).toThrow(
      expect.objectContaining({
        code: 'FW_ROUTES_LATE',
        message: expect.stringMatching(/^get\("\/b"\)/),
      }),
    )
  })
})
