/**
 * Audit 20: matching and URL generation as a user hits them.
 *
 * Regression: urlFor percent-encoded every reserved character of a value (encodeURIComponent),
 * then tested the constraint on that text. A path may hold the sub-delimiters, ':' and '@' as
 * they are, and match() tests them as sent, so a constraint written with them
 * (`{ids:[0-9]+(,[0-9]+)*}`, `{email:[^/@]+@[^/@]+}`) matched `/posts/1,2` while urlFor refused
 * '1,2' with FW_URL_PARAM ("a value it refuses could not have matched" did not hold).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

function register(r: Registrar): void {
  r.get('/posts/{ids:[0-9]+(,[0-9]+)*}', noop, 'posts.many')
  r.get('/ns/{key:[a-z]+:[a-z]+}', noop, 'ns')
  r.get('/kv/{pair:[a-z]+=[a-z]+}', noop, 'kv')
  r.get('/sum/{expr:[0-9]+(\\+[0-9]+)+}', noop, 'sum')
  r.get('/and/{both:[a-z]+&[a-z]+}', noop, 'and')
  r.get('/matrix/{m:[a-z]+;v=[0-9]+}', noop, 'matrix')
  // Tested in place on the path ('$', '^' or a lookbehind in the regex).
  r.get('/mail/{email:[^/@]+@[^/@]+}', noop, 'mail')
  r.get('/price/{p:\\$[0-9]+}', noop, 'price')
  r.get('/at/{h:(?<=at/)@[a-z]+}', noop, 'handle')
  // A regex written with an escape encodeURIComponent leaves out ('!' is %21 here).
  r.get('/bang/{b:[a-z]+%21}', noop, 'bang')
  r.get('/bang2/{b:(?<=/)[a-z]+%21}', noop, 'bang.in-place')
  // Two constrained values in one path, each in its own spelling.
  r.get('/two/{a:[a-z]+,[a-z]+}/{b:[a-z]+%2C[a-z]+}', noop, 'two')
  r.get('/plain/{x}', noop, 'plain')
}

let m: CompiledModule
beforeAll(async () => {
  m = await compileRoutes(register)
})

/** match() of the path urlFor built, as the route's name and params. */
function roundTrip(name: string, params: Record<string, string>): unknown {
  const url = m.urlFor(name, params)
  const result = m.match('GET', url)
  return 'route' in result ? { url, name: result.route.name, params: { ...result.params } } : result
}

describe('urlFor for a constraint written with a sub-delimiter, ":" or "@"', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['posts.many', { ids: '1,2,3' }, '/posts/1,2,3'],
    ['ns', { key: 'app:config' }, '/ns/app:config'],
    ['kv', { pair: 'a=b' }, '/kv/a=b'],
    ['sum', { expr: '1+2' }, '/sum/1+2'],
    ['and', { both: 'a&b' }, '/and/a&b'],
    ['matrix', { m: 'doc;v=2' }, '/matrix/doc;v=2'],
    ['mail', { email: 'ann@example.com' }, '/mail/ann@example.com'],
    ['price', { p: '$5' }, '/price/$5'],
    ['handle', { h: '@ann' }, '/at/@ann'],
  ]

  it.each(cases)('%s: match() takes the path with the character as is', (name, params, path) => {
    const result = m.match('GET', path)
    expect('route' in result && result.route.name).toBe(name)
    expect('route' in result && { ...result.params }).toEqual(params)
  })

  it.each(cases)(
    '%s: urlFor builds that URL instead of refusing the value',
    (name, params, path) => {
      expect(roundTrip(name, params)).toEqual({ url: path, name, params })
    },
  )

  it('takes a value a regex with an escape of "!" matches, escaping it as the regex does', () => {
    expect(m.match('GET', '/bang/hi%21')).toMatchObject({ params: { b: 'hi!' } })
    expect(roundTrip('bang', { b: 'hi!' })).toEqual({
      url: '/bang/hi%21',
      name: 'bang',
      params: { b: 'hi!' },
    })
    expect(roundTrip('bang.in-place', { b: 'hi!' })).toEqual({
      url: '/bang2/hi%21',
      name: 'bang.in-place',
      params: { b: 'hi!' },
    })
  })

  it('spells each value of a path for its own constraint', () => {
    expect(roundTrip('two', { a: 'a,b', b: 'c,d' })).toEqual({
      url: '/two/a,b/c%2Cd',
      name: 'two',
      params: { a: 'a,b', b: 'c,d' },
    })
  })

  it('still refuses, with the usual message, a value no spelling lets the constraint match', () => {
    expect(() => m.urlFor('posts.many', { ids: '1;2' })).toThrow(
      'urlFor("posts.many"): parameter "ids" "1;2" (in a URL "1%3B2") does not match [0-9]+(,[0-9]+)*',
    )
    expect(() => m.urlFor('mail', { email: 'nobody' })).toThrow(
      'urlFor("mail"): parameter "email" "nobody" does not match [^/@]+@[^/@]+',
    )
  })

  it('keeps encoding those characters for a parameter without a constraint', () => {
    expect(m.urlFor('plain', { x: 'a,b@c:d' })).toBe('/plain/a%2Cb%40c%3Ad')
    expect(m.urlFor('posts.many', { ids: '12' }, { q: 'a,b' })).toBe('/posts/12?q=a%2Cb')
  })
})

describe('urlFor arguments of the wrong kind', () => {
  it('refuses a query or parameters given as a string or a list, instead of reading them by index', () => {
    expect(() => m.urlFor('plain', { x: 'a' }, 'a=1' as never)).toThrow(
      'urlFor("plain"): the query (third argument) must be an object of names to values, got string',
    )
    expect(() => m.urlFor('plain', ['a'] as never)).toThrow(
      'urlFor("plain"): the parameters (second argument) must be an object of names to values, got an array',
    )
    expect(m.urlFor('plain', { x: 'a' }, null as never)).toBe('/plain/a')
    // A falsy query stands for none, as it always has (`cond && { page: 2 }`).
    expect(m.urlFor('plain', { x: 'a' }, false as never)).toBe('/plain/a')
  })
})

describe('urlFor with a URLSearchParams or Map query', () => {
  it('writes its entries (they were silently no query at all), a repeated key as a list', () => {
    const search = new URLSearchParams('tag=a&page=2&tag=b&__proto__=x')
    expect(m.urlFor('plain', { x: 'a' }, search)).toBe(
      '/plain/a?tag%5B0%5D=a&tag%5B1%5D=b&page=2&__proto__=x',
    )
    const map = new Map<string, unknown>([
      ['page', 2],
      ['sort', 'name'],
    ])
    expect(m.urlFor('plain', { x: 'a' }, map)).toBe('/plain/a?page=2&sort=name')
    expect(m.urlFor('plain', { x: 'a' }, new URLSearchParams())).toBe('/plain/a')
  })
})

describe('urlFor with another iterable as the query or the parameters', () => {
  it('refuses a Headers, FormData, Set or iterator naming it (they were silently no query)', () => {
    const url = (query: unknown) => () => m.urlFor('plain', { x: 'a' }, query as never)
    const refused = (kind: string) =>
      `urlFor("plain"): the query (third argument) must be an object of names to values, got ${kind}`
    expect(url(new Headers({ page: '2' }))).toThrow(refused('a Headers'))
    const form = new FormData()
    form.append('page', '2')
    expect(url(form)).toThrow(refused('a FormData'))
    expect(url(new Set(['page']))).toThrow(refused('a Set'))
    expect(url(new Map([['page', 2]]).entries())).toThrow(refused('an iterator'))
    expect(url({ *[Symbol.iterator]() {} })).toThrow(refused('an iterable'))
    expect(url(new Int8Array(2))).toThrow(refused('an Int8Array'))
    expect(url(new Uint8Array(2))).toThrow(refused('a Uint8Array'))
    // Async ones too: a stream or an async generator has no own keys either.
    expect(url(new ReadableStream())).toThrow(refused('a ReadableStream'))
    expect(url((async function* () {})())).toThrow(refused('an iterator'))
    expect(() => m.urlFor('plain', new Map([['x', 'a']]) as never)).toThrow(
      'urlFor("plain"): the parameters (second argument) must be an object of names to values, got a Map',
    )
  })

  it('refuses a Map query whose keys write one name twice, or whose key is no name', () => {
    const both = new Map<unknown, unknown>([
      [1, 'a'],
      ['1', 'b'],
    ])
    expect(() => m.urlFor('plain', { x: 'a' }, both as never)).toThrow(
      'urlFor("plain"): the query Map has two keys written "1" (a number and a string)',
    )
    const symbol = new Map<unknown, unknown>([[Symbol('page'), 2]])
    expect(() => m.urlFor('plain', { x: 'a' }, symbol as never)).toThrow(
      'urlFor("plain"): a query Map\'s keys must be strings or numbers, got symbol',
    )
    expect(m.urlFor('plain', { x: 'a' }, new Map([[2, 'b']]) as never)).toBe('/plain/a?2=b')
  })
})

describe('urlFor with a collection as a query value', () => {
  it('refuses a Set, Map or iterator there instead of writing "[object Set]"', () => {
    expect(() => m.urlFor('plain', { x: 'a' }, { tags: new Set(['a', 'b']) } as never)).toThrow(
      'urlFor: the query value "tags" is a Set, which would be written as "[object Set]"; give a list (an array) or an object',
    )
    expect(() =>
      m.urlFor('plain', { x: 'a' }, { filter: { by: new Map([['a', 1]]) } } as never),
    ).toThrow('urlFor: the query value "filter[by]" is a Map')
    expect(() => m.urlFor('plain', { x: 'a' }, { ids: [1, 2].values() } as never)).toThrow(
      'urlFor: the query value "ids" is an iterator',
    )
    // Values written with String() stay so (a date), and lists are lists.
    const at = new Date(0)
    expect(m.urlFor('plain', { x: 'a' }, { at, tags: ['a', 'b'] } as never)).toBe(
      `/plain/a?at=${encodeURIComponent(String(at))}&tags%5B0%5D=a&tags%5B1%5D=b`,
    )
  })
})
