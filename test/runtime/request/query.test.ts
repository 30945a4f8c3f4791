/** The nested-key parser shared by query strings and urlencoded bodies, and cookie parsing. */
import { describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import { parseCookies } from '../../../src/runtime/request/cookies.js'
import { buildQuery, parseParams } from '../../../src/runtime/request/query.js'

const limits = { keys: 1000, depth: 32 }

describe('parseParams', () => {
  it('nests bracketed keys and builds lists from []', () => {
    expect(parseParams('a[b]=1&c[]=2&c[]=3', limits)).toEqual({ a: { b: '1' }, c: ['2', '3'] })
  })

  it('reads explicit indexes as lists only when they are dense from 0', () => {
    expect(parseParams('i[1]=b&i[0]=a', limits)).toEqual({ i: ['a', 'b'] })
    expect(parseParams('i[5]=x', limits)).toEqual({ i: { 5: 'x' } })
    expect(parseParams('i[0][name]=a&i[1][name]=b', limits)).toEqual({
      i: [{ name: 'a' }, { name: 'b' }],
    })
  })

  it('decodes + and percent escapes without throwing on malformed ones (as URLSearchParams)', () => {
    expect(parseParams('q=a+b%20c&bad=%E0%A4%A&pct=100%', limits)).toEqual({
      q: 'a b c',
      bad: '\ufffd%A',
      pct: '100%',
    })
  })

  it('lets the last plain key win, and a key without = be empty', () => {
    expect(parseParams('a=1&a=2&flag', limits)).toEqual({ a: '2', flag: '' })
  })

  it('treats unbalanced brackets as part of a plain name', () => {
    expect(parseParams('a[b=1&[c]=2&d]=3', limits)).toEqual({ 'a[b': '1', '[c]': '2', 'd]': '3' })
  })

  it('ignores pairs past the key limit for queries, and refuses them (413) for bodies', () => {
    expect(parseParams('a=1&b=2&c=3', { keys: 2, depth: 5 })).toEqual({ a: '1', b: '2' })
    const error = (() => {
      try {
        parseParams('a=1&b=2&c=3', { keys: 2, depth: 5 }, true)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(HttpError)
    expect((error as HttpError).status).toBe(413)
  })

  it('keeps levels past the depth limit as text for queries, and refuses them for bodies', () => {
    expect(parseParams('a[b][c][d]=1', { keys: 10, depth: 2 })).toEqual({ a: { 'b[c][d]': '1' } })
    expect(() => parseParams('a[b][c]=1', { keys: 10, depth: 2 }, true)).toThrow(/deeper/)
  })

  it('drops __proto__, constructor and prototype keys at any level', () => {
    const parsed = parseParams(
      '__proto__[polluted]=1&constructor[prototype][x]=1&a[__proto__][y]=1&b[prototype]=1&ok=1',
      limits,
    )
    expect(parsed).toEqual({ ok: '1' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(parsed)).toBeNull()
  })

  // Its cost is for the benchmarks; what a client sees is the one parameter after the run.
  it('reads past a long run of separators (empty pairs are no keys)', () => {
    expect(parseParams('&'.repeat(1_000_000) + 'a=1', limits)).toEqual({ a: '1' })
    expect(parseParams(`${'&'.repeat(100_000)}a=1${'&'.repeat(100_000)}b=2`, limits)).toEqual({
      a: '1',
      b: '2',
    })
  })
})

describe('buildQuery', () => {
  it('round-trips nested parameters', () => {
    const params = { a: { b: '1' }, c: ['2', '3'], s: 'x y' }
    expect(parseParams(buildQuery(params), limits)).toEqual(params)
  })
})

describe('parseCookies', () => {
  it('splits, trims, unquotes and decodes; the first occurrence wins', () => {
    expect(parseCookies('sid=abc%20d; theme="dark" ;sid=other; bad=%E0%A4%A; =x; novalue')).toEqual(
      {
        sid: 'abc d',
        theme: 'dark',
        bad: '%E0%A4%A',
      },
    )
  })

  it('never sets a prototype from a cookie name', () => {
    expect(parseCookies('__proto__=x; a=1')).toEqual({ a: '1' })
  })
})
