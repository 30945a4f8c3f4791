/**
 * Regressions found by the seventh audit's differential campaigns against the compiled router
 * (route tables beyond what fuzz.test.ts and parity.test.ts generate), each minimised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'
import { ReferenceMatcher } from '../support/reference-matcher.js'
import { Gen, mulberry32 } from '../support/seeded-random.js'

afterAll(cleanupTempDirs)

describe('a line separator (U+2028) in a domain pattern', () => {
  it('leaves the generated modules loadable: it ended the line comments naming the host', async () => {
    // The regex's class holds a raw U+2028, which JavaScript reads as a line break in a `//`
    // comment: index.mjs failed to load with "Unexpected token ']'".
    const m = await compileRoutes((r) => {
      r.group({ domain: '{t:[a-z\u2028]+}.example.com' }, (r) => r.get('/x', noop, 'x'))
      r.get('/y', noop, 'y')
    })
    expect(m.match('GET', '/x', 'acme.example.com')).toMatchObject({
      route: { name: 'x' },
      params: { t: 'acme' },
    })
    expect(m.match('GET', '/y')).toMatchObject({ route: { name: 'y' } })
  })
})

describe('domain patterns that match the same hosts alike', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.group({ domain: '{account}.example.com' }, (r) => r.get('/x/{p}', noop, 'any'))
      r.group({ domain: '{tenant}.example.com' }, (r) => {
        r.get('/x/y', noop, 'fixed')
        r.get('/n/{id:int}', noop, 'number')
      })
      r.group({ domain: 'admin.example.com' }, (r) => r.get('/a/{p}', noop, 'admin.any'))
      r.group({ domain: 'Admin.example.com' }, (r) => r.get('/a/b', noop, 'admin.fixed'))
    })
  })

  it('order their routes by path as one table: a static segment beats a parameter', () => {
    // Each pattern was a group of its own, tried whole in turn: /x/{p} of the first group
    // answered /x/y, which the more specific /x/y of the second names exactly.
    expect(m.match('GET', '/x/y', 'acme.example.com')).toMatchObject({
      route: { name: 'fixed' },
      params: { tenant: 'acme' },
    })
    expect(m.match('GET', '/a/b', 'ADMIN.example.com:8080')).toMatchObject({
      route: { name: 'admin.fixed' },
    })
  })

  it('give each route its host parameter under its own name (ints as numbers)', () => {
    expect(m.match('GET', '/x/z', 'acme.example.com')).toEqual({
      route: expect.objectContaining({ name: 'any' }),
      params: { account: 'acme', p: 'z' },
    })
    expect(m.match('GET', '/n/7', 'Acme.example.com.')).toEqual({
      route: expect.objectContaining({ name: 'number' }),
      params: { tenant: 'acme', id: 7 },
    })
    expect(m.match('GET', '/a/c', 'admin.example.com')).toEqual({
      route: expect.objectContaining({ name: 'admin.any' }),
      params: { p: 'c' },
    })
    expect(m.match('POST', '/x/y', 'acme.example.com')).toEqual({
      status: 405,
      allow: ['GET', 'HEAD'],
    })
    expect(m.match('GET', '/x/y', 'example.com')).toEqual({ status: 404 })
  })
})

describe('a domain constraint that could match a "."', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.group({ domain: '{tenant:[^-]+}.example.com' }, (r) => r.get('/t', noop, 'tenant'))
      r.group({ domain: 'api.{zone:[a-z.]+}' }, (r) => r.get('/z', noop, 'zone'))
      r.group({ domain: '{n:int}.{w:\\w+(?:\\.\\w+)?}.{x:a.b|c}.com' }, (r) =>
        r.get('/w', noop, 'w'),
      )
    })
  })

  it('matches one whole label, as a parameter does: it ran over several', () => {
    // `[^-]+` took "a.b", and `api.{zone:[a-z.]+}` any host under api.: "api.evil.com".
    expect(m.match('GET', '/t', 'a.b.example.com')).toEqual({ status: 404 })
    expect(m.match('GET', '/z', 'api.evil.com')).toEqual({ status: 404 })
    expect(m.match('GET', '/w', '1.a.b.c.com')).toEqual({ status: 404 })
    expect(m.match('GET', '/w', '1.a.a.b.com')).toEqual({ status: 404 })
  })

  it('still takes a label it matches, at any position', () => {
    expect(m.match('GET', '/t', 'Acme.example.com')).toMatchObject({ params: { tenant: 'acme' } })
    expect(m.match('GET', '/z', 'api.com:8080')).toMatchObject({ params: { zone: 'com' } })
    expect(m.match('GET', '/w', '7.ab.axb.com')).toMatchObject({
      route: { name: 'w' },
      params: { n: 7, w: 'ab', x: 'axb' },
    })
    expect(m.match('GET', '/w', '7.ab.c.com.')).toMatchObject({ params: { n: 7, w: 'ab', x: 'c' } })
    expect(m.urlFor('zone', { zone: 'com' }, {}, true)).toBe('http://api.com/z')
  })
})

describe('a domain constraint with a backreference or a named group', () => {
  it('is a build error: pasted into the whole-Host regex it never matched, or failed to load', async () => {
    for (const domain of [
      '{t:(a)\\1}.example.com',
      '{t:(?<x>a)b}.example.com',
      '{t:(?<x>a)\\k<x>}.example.com',
    ]) {
      await expect(
        compileRoutes((r) => r.group({ domain }, (r) => r.get('/x', noop, 'x'))),
        domain,
      ).rejects.toMatchObject({
        code: 'FW_REGEX_INVALID',
        message: expect.stringMatching(/which a domain parameter cannot use/),
      })
    }
    // Groups that name nothing, lookbehinds, and a path's own backreference stay allowed.
    const m = await compileRoutes((r) => {
      r.group({ domain: '{t:(?:a|b)(?<=a)c}.example.com' }, (r) => r.get('/x', noop, 'x'))
      r.get('/p/{v:(a)\\1}', noop, 'p')
    })
    expect(m.match('GET', '/x', 'ac.example.com')).toMatchObject({ params: { t: 'ac' } })
    expect(m.match('GET', '/p/aa')).toMatchObject({ params: { v: 'aa' } })
  })
})

// The generator that found the two above: domain routes only, over host patterns alike (same
// keys, other names or case) and constraints that could match a '.', against the reference.
const HOSTS = [
  '{account}.example.com',
  '{tenant}.example.com',
  'admin.example.com',
  'Admin.example.com',
  '{n:int}.example.com',
  '{t:[^-]+}.example.com',
  'api.{zone:[a-z.]+}',
]
const REQUEST_HOSTS = [
  'acme.example.com',
  'ADMIN.example.com.',
  'admin.example.com:80',
  '42.example.com',
  'a.b.example.com',
  'api.com',
  'api.evil.com',
  'example.com',
]
const PATHS = ['/x', '/x/{p}', '/x/y', '/x/{n:int}', '/{q}/y', '/z/{rest:.*}']
const REQUEST_PATHS = ['/x', '/x/y', '/x/7', '/x/z', '/a/y', '/z', '/z/a/b', '/y']

describe('seeded: domain routes over host patterns alike, vs the reference matcher', () => {
  it('agrees on every lookup', async () => {
    for (let seed = 1; seed <= 25; seed++) {
      const g = new Gen(mulberry32(seed))
      const specs: { method: string; path: string; host: string }[] = []
      for (let i = 0; i < 12; i++) {
        const spec = {
          method: g.pick(['GET', 'GET', 'POST']),
          path: g.pick(PATHS),
          host: g.pick(HOSTS),
        }
        if (accepts([...specs, spec])) specs.push(spec)
      }
      const register = (r: Registrar): void => {
        for (const s of specs)
          r.group({ domain: s.host }, (r) => r[s.method === 'GET' ? 'get' : 'post'](s.path, noop))
      }
      const m = await compileRoutes(register)
      const reference = new ReferenceMatcher(collectRoutes(register).routes)
      for (const host of REQUEST_HOSTS) {
        for (const path of REQUEST_PATHS) {
          for (const method of ['GET', 'POST']) {
            const result = m.match(method, path, host)
            const got =
              'route' in result ? { route: result.route.id, params: { ...result.params } } : result
            const table = specs.map((s) => `${s.method} ${s.host}${s.path}`).join(', ')
            expect(got, `seed ${seed}: ${method} ${host}${path} over ${table}`).toEqual(
              reference.match(method, path, host),
            )
          }
        }
      }
    }
  })
})

function accepts(specs: { method: string; path: string; host: string }[]): boolean {
  try {
    const register = (r: Registrar): void => {
      for (const s of specs)
        r.group({ domain: s.host }, (r) => r[s.method === 'GET' ? 'get' : 'post'](s.path, noop))
    }
    analyzeRoutes(collectRoutes(register).routes, new Set())
    return true
  } catch (error) {
    if (error instanceof FwError) return false
    throw error
  }
}
