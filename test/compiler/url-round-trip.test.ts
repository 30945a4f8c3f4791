/**
 * urlFor and match() agree: a URL urlFor returns matches its own route with the same values, and a
 * value urlFor refuses could not have matched. Seeded random values of every parameter type,
 * with spaces, unicode, '/', '?', '#', '%' and dot segments, go through urlFor and back.
 *
 * Regressions: urlFor tested a regex constraint on the decoded value while match() tests the
 * encoded segment (`{q:[a-z]+%20[a-z]+}` refused 'a b', which matches; `{q:[a-z ]+}` built
 * `/q/a%20b`, a 404); a root catch-all built `///evil.com/x`, a URL to another site; '..' gave
 * `/d/..`, which clients collapse; a lone surrogate threw a raw URIError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'
import { mulberry32 } from '../support/seeded-random.js'

afterAll(() => cleanupTempDirs())

type Value = string | number | undefined
interface Case {
  name: string
  /** Path parameters in order; the last may be optional. */
  params: string[]
  int?: string[]
  /** Values to try for each parameter. */
  values: (rand: () => number) => Value[]
}

function register(r: Registrar): void {
  r.get('/plain/{x}', noop, 'plain')
  r.get('/int/{x:int}', noop, 'int')
  r.get('/slug/{x:slug}', noop, 'slug')
  r.get('/uuid/{x:uuid}', noop, 'uuid')
  r.get('/hex/{x:hex}', noop, 'hex')
  r.get('/code/{x:[A-Z]{3}}', noop, 'code')
  r.get('/escaped/{x:[a-z]+%20[a-z]+}', noop, 'escaped')
  r.get('/spaced/{x:[a-z ]+}', noop, 'spaced')
  r.get('/accent/{x:[a-zé]+}', noop, 'accent')
  r.get('/noslash/{x:[^/]+}', noop, 'noslash')
  r.get('/opt/{x}/{y?}', noop, 'opt')
  r.get('/files/{x:.*}', noop, 'files')
  r.get('/docs/{x:.+}', noop, 'docs')
}

// Characters a value may hold: reserved, unreserved, '%', unicode (2, 3 and 4 UTF-8 bytes).
const ALPHABET = [..."abzAZ09-_.~ /?#%+&=:@!'()*;,$[]", 'é', '中', '😀']
const SPECIAL = ['.', '..', '...', '/', '//', '//evil.com/x', 'a/', '/a', 'a//b', 'a/./b']
const MORE = ['a/../b', '%2F', '%41', '%', '%%', 'a b', '?', '#', 'é', 'café']

const pick = <T>(rand: () => number, list: readonly T[]): T =>
  list[Math.floor(rand() * list.length)]!
const text = (rand: () => number, chars: readonly string[], max = 8): string =>
  Array.from({ length: 1 + Math.floor(rand() * max) }, () => pick(rand, chars)).join('')
const anything = (rand: () => number): string[] => [
  ...SPECIAL,
  ...MORE,
  ...Array.from({ length: 120 }, () => text(rand, ALPHABET)),
]
const hexDigits = [...'0123456789abcdefABCDEF']
const lower = [...'abcdefghijklmnopqrstuvwxyz']

const CASES: Case[] = [
  { name: 'plain', params: ['x'], values: anything },
  {
    name: 'int',
    params: ['x'],
    int: ['x'],
    values: (rand) => [
      0,
      7,
      '007',
      ...Array.from({ length: 40 }, () => Math.floor(rand() * 1e9)),
      'x',
      '-1',
      '1.5',
    ],
  },
  {
    name: 'slug',
    params: ['x'],
    values: (rand) => [
      ...Array.from({ length: 40 }, () => `${text(rand, lower, 4)}-${text(rand, lower, 4)}`),
      ...anything(rand),
    ],
  },
  {
    name: 'uuid',
    params: ['x'],
    values: (rand) => [
      ...Array.from({ length: 20 }, () =>
        [8, 4, 4, 4, 12].map((n) => text(rand, hexDigits, 1).repeat(n)).join('-'),
      ),
      'not-a-uuid',
    ],
  },
  {
    name: 'hex',
    params: ['x'],
    values: (rand) => [...Array.from({ length: 30 }, () => text(rand, hexDigits)), 'xyz', 'a b'],
  },
  {
    name: 'code',
    params: ['x'],
    values: (rand) => [
      ...Array.from({ length: 20 }, () => text(rand, [...'ABCXYZ'], 1).repeat(3)),
      'ab',
      'ABCD',
    ],
  },
  {
    name: 'escaped',
    params: ['x'],
    values: (rand) => [
      'a b',
      ...Array.from({ length: 30 }, () => `${text(rand, lower, 5)} ${text(rand, lower, 5)}`),
      ...anything(rand),
    ],
  },
  {
    name: 'spaced',
    params: ['x'],
    values: (rand) => [
      ...Array.from({ length: 30 }, () => text(rand, [...lower, ' '])),
      ...anything(rand),
    ],
  },
  {
    name: 'accent',
    params: ['x'],
    values: (rand) => [
      ...Array.from({ length: 30 }, () => text(rand, [...lower, 'é'])),
      ...anything(rand),
    ],
  },
  { name: 'noslash', params: ['x'], values: anything },
  {
    name: 'opt',
    params: ['x', 'y'],
    values: (rand) => [undefined, ...anything(rand)],
  },
  { name: 'files', params: ['x'], values: (rand) => ['', ...anything(rand)] },
  { name: 'docs', params: ['x'], values: (rand) => ['', ...anything(rand)] },
]

/** The value match() gives back for what urlFor was given. */
const expected = (value: Value, int: boolean): string | number | null =>
  value === undefined ? null : int ? Number(value) : String(value)

/** A URL a naive client could build for a value urlFor refused: it must not match the route. */
function naiveUrl(prefix: string, value: string, catchAll: boolean): string {
  const encode = (s: string): string => {
    try {
      return encodeURIComponent(s)
    } catch {
      return s
    }
  }
  return prefix + (catchAll ? value.split('/').map(encode).join('/') : encode(value))
}

let m: CompiledModule
beforeAll(async () => {
  m = await compileRoutes(register)
})

describe('urlFor round-trips through match()', () => {
  it.each(CASES)('$name: every URL it builds matches its route with the same values', (c) => {
    const rand = mulberry32(0x5eed + c.name.length)
    const values = c.values(rand)
    let accepted = 0
    for (let i = 0; i < values.length; i++) {
      const params: Record<string, Value> = {}
      params[c.params[0]!] = values[i]
      if (c.params[1]) params[c.params[1]] = values[(i * 7 + 3) % values.length]
      let url: string
      try {
        url = m.urlFor(c.name, params)
      } catch (error) {
        expect((error as { name?: string }).name, String(error)).toBe('UrlGenerationError')
        expect((error as { code?: string }).code).toBe('FW_URL_PARAM')
        const first = params[c.params[0]!]
        if (c.params.length === 1 && typeof first === 'string' && first !== '') {
          const pattern = m.routes.find((r) => r.name === c.name)!.path
          const prefix = pattern.slice(0, pattern.indexOf('{'))
          const naive = m.match('GET', naiveUrl(prefix, first, c.name === 'files'))
          const hit = 'route' in naive ? naive : null
          const sameValue = hit !== null && hit.params.x === first
          expect(hit?.route.name === c.name && sameValue, `${c.name} ${first}`).toBe(false)
        }
        continue
      }
      accepted++
      const where = `${c.name} ${JSON.stringify(params)} → ${url}`
      expect(url.startsWith('/') && !url.startsWith('//'), where).toBe(true)
      expect(new URL(url, 'http://site.test').origin, where).toBe('http://site.test')
      const result = m.match('GET', url)
      expect('route' in result ? result.route.name : result, where).toBe(c.name)
      const want = Object.fromEntries(
        c.params.map((p) => [p, expected(params[p], c.int?.includes(p) ?? false)]),
      )
      expect('route' in result ? result.params : null, where).toEqual(want)
    }
    expect(accepted, `${c.name}: too few values accepted to mean anything`).toBeGreaterThan(10)
  })
})

describe('constraints are tested on the encoded text match() tests', () => {
  it('accepts a value whose encoded form the regex matches ({x:[a-z]+%20[a-z]+})', () => {
    expect(m.urlFor('escaped', { x: 'a b' })).toBe('/escaped/a%20b')
    expect(m.match('GET', '/escaped/a%20b')).toMatchObject({ params: { x: 'a b' } })
  })

  it('refuses a value whose decoded form only the regex matches ({x:[a-z ]+}, {x:[a-zé]+})', () => {
    expect(() => m.urlFor('spaced', { x: 'a b' })).toThrow(
      'parameter "x" "a b" (in a URL "a%20b") does not match [a-z ]+',
    )
    expect(() => m.urlFor('accent', { x: 'café' })).toThrow(/does not match/)
    expect(m.match('GET', '/spaced/a%20b')).toEqual({ status: 404 })
    expect(m.match('GET', '/accent/caf%C3%A9')).toEqual({ status: 404 })
    expect(m.urlFor('accent', { x: 'caf' })).toBe('/accent/caf')
  })

  it('accepts a value with "/" where the regex allows its escape ({x:[^/]+})', () => {
    expect(m.urlFor('noslash', { x: 'a/b' })).toBe('/noslash/a%2Fb')
  })
})

describe('a root catch-all', () => {
  let root: CompiledModule
  beforeAll(async () => {
    root = await compileRoutes((r) => r.get('/{path:.*}', noop, 'fallback'))
  })

  it('never gives a URL starting with "//" (a URL to another site)', () => {
    expect(root.urlFor('fallback', { path: '//evil.com/x' })).toBe('/%2F/evil.com/x')
    expect(root.urlFor('fallback', { path: '/' })).toBe('/%2F')
    expect(root.urlFor('fallback', { path: '///' })).toBe('/%2F/%2F')
    expect(
      new URL(root.urlFor('fallback', { path: '//evil.com/x' }), 'http://site.test').host,
    ).toBe('site.test')
  })

  it('gives URLs that match back to the same value', () => {
    const rand = mulberry32(42)
    for (const path of ['', ...anything(rand)]) {
      const url = root.urlFor('fallback', { path })
      expect(url.startsWith('//'), url).toBe(false)
      expect(root.match('GET', url), url).toMatchObject({ params: { path } })
    }
  })
})

describe('dot segments and malformed unicode', () => {
  it('escapes a whole "." or ".." value so that clients do not remove it as a dot-segment', () => {
    expect(m.urlFor('plain', { x: '..' })).toBe('/plain/%2E%2E')
    expect(m.urlFor('plain', { x: '.' })).toBe('/plain/%2E')
    expect(m.urlFor('plain', { x: '...' })).toBe('/plain/...')
    expect(m.match('GET', '/plain/%2E%2E')).toMatchObject({ params: { x: '..' } })
  })

  it("glues a catch-all's dot pieces to their neighbours with %2F, so that browsers keep them", () => {
    const cases: [string, string][] = [
      ['a/../b/./c', '/files/a%2F..%2Fb%2F.%2Fc'],
      ['../etc/passwd', '/files/..%2Fetc/passwd'],
      ['x/y/..', '/files/x/y%2F..'],
      ['/..', '/files/%2F..'],
      ['../', '/files/..%2F'],
      ['a/.../b', '/files/a/.../b'],
    ]
    for (const [x, url] of cases) {
      expect(m.urlFor('files', { x })).toBe(url)
      // What a browser or fetch() sends: WHATWG URL parsing removes dot-segments, %2E%2E ones too.
      expect(new URL(url, 'http://localhost').pathname).toBe(url)
      expect(m.match('GET', url)).toMatchObject({ params: { x } })
    }
  })

  it('throws UrlGenerationError, not a URIError, for a lone surrogate', () => {
    for (const build of [
      () => m.urlFor('plain', { x: 'a\uD800' }),
      () => m.urlFor('files', { x: 'a/\uDC00' }),
      () => m.urlFor('plain', { x: 'a' }, { q: '\uD800' }),
      () => m.urlFor('plain', { x: 'a' }, { ['\uD800']: 'v' }),
    ]) {
      let caught: unknown
      try {
        build()
      } catch (error) {
        caught = error
      }
      expect((caught as Error | undefined)?.name).toBe('UrlGenerationError')
      expect((caught as { code?: string }).code).toBe('FW_URL_PARAM')
    }
  })
})
