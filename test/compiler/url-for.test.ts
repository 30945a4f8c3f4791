import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

const BASE = 'https://example.com:8443'

function register(r: Registrar): void {
  r.get('/', noop, 'home')
  r.get('/about/team', noop, 'team')
  r.get('/users/{id:int}', noop, 'users.show')
  r.get('/users/{id:int}/posts/{post}', noop, 'users.post')
  r.get('/tags/{tag}', noop, 'tags.show')
  r.get('/code/{code:[A-Z]{3}}', noop, 'code')
  r.get('/slug/{s:slug}', noop, 'slug')
  r.get('/opt/{name?}', noop, 'opt')
  r.get('/files/{path:.*}', noop, 'files')
  r.get('/docs/{path:.+}', noop, 'docs')
  r.get('/hello world', noop, 'space')
  r.group({ prefix: '/api/v1', name: 'v1.' }, (r) => r.get('/users/{id:int}', noop, 'users.show'))
  r.group({ domain: '{account}.example.com', name: 'tenant.' }, (r) => {
    r.get('/whoami', noop, 'whoami')
    r.get('/users/{id:int}', noop, 'user')
  })
  r.group({ domain: 'admin.example.com' }, (r) => r.get('/dashboard', noop, 'admin'))
}

/** Calls urlFor and returns the error it throws (fails the test when it does not throw). */
function errorOf(build: () => string): Error & { code?: string } {
  let url: string
  try {
    url = build()
  } catch (error) {
    expect(error).toBeInstanceOf(Error)
    return error as Error & { code?: string }
  }
  throw new Error(`expected urlFor to throw, but it returned ${JSON.stringify(url)}`)
}

let m: CompiledModule
beforeAll(async () => {
  m = await compileRoutes(register)
})

describe('relative URLs', () => {
  it('builds static paths', () => {
    expect(m.urlFor('home')).toBe('/')
    expect(m.urlFor('team')).toBe('/about/team')
  })

  it('fills parameters, numbers and numeric strings alike', () => {
    expect(m.urlFor('users.show', { id: 5 })).toBe('/users/5')
    expect(m.urlFor('users.show', { id: '5' })).toBe('/users/5')
    expect(m.urlFor('users.post', { id: 3, post: 'hello' })).toBe('/users/3/posts/hello')
  })

  it('uses the full name and path of a route in a group', () => {
    expect(m.urlFor('v1.users.show', { id: 7 })).toBe('/api/v1/users/7')
  })

  it('fills a custom regex parameter that satisfies its constraint', () => {
    expect(m.urlFor('code', { code: 'ABC' })).toBe('/code/ABC')
  })

  it('keeps encoded literals of the pattern', () => {
    expect(m.urlFor('space')).toBe('/hello%20world')
  })
})

describe('encoding of parameter values', () => {
  it('percent-encodes a space', () => {
    expect(m.urlFor('tags.show', { tag: 'a b' })).toBe('/tags/a%20b')
  })

  it('percent-encodes "/" so the value stays one segment', () => {
    expect(m.urlFor('tags.show', { tag: 'a/b' })).toBe('/tags/a%2Fb')
  })

  it('percent-encodes unicode as UTF-8', () => {
    expect(m.urlFor('tags.show', { tag: 'café' })).toBe('/tags/caf%C3%A9')
  })

  it('percent-encodes reserved characters', () => {
    expect(m.urlFor('tags.show', { tag: 'a?b#c&d%' })).toBe('/tags/a%3Fb%23c%26d%25')
  })

  it('gives a URL the matcher maps back to the same value', () => {
    const value = 'a b/c?é'
    const url = m.urlFor('tags.show', { tag: value })
    const result = m.match('GET', url)
    expect(result).toMatchObject({ params: { tag: value } })
  })
})

describe('optional parameters', () => {
  it('leaves out an omitted optional parameter without a trailing slash', () => {
    expect(m.urlFor('opt')).toBe('/opt')
    expect(m.urlFor('opt', {})).toBe('/opt')
  })

  it('treats null and undefined as omitted', () => {
    expect(m.urlFor('opt', { name: null })).toBe('/opt')
    expect(m.urlFor('opt', { name: undefined })).toBe('/opt')
  })

  it('fills a given optional parameter', () => {
    expect(m.urlFor('opt', { name: 'bob' })).toBe('/opt/bob')
  })

  it('gives "/" for an omitted optional parameter at the root', async () => {
    const root = await compileRoutes((r) => r.get('/{lang?}', noop, 'lang'))
    expect(root.urlFor('lang')).toBe('/')
    expect(root.urlFor('lang', { lang: 'en' })).toBe('/en')
  })

  it('rejects a later optional parameter given without the earlier one', async () => {
    const two = await compileRoutes((r) => r.get('/opt/{a?}/{b?}', noop, 'two'))
    expect(two.urlFor('two', { a: 'x' })).toBe('/opt/x')
    expect(two.urlFor('two', { a: 'x', b: 'y' })).toBe('/opt/x/y')
    const error = errorOf(() => two.urlFor('two', { b: 'y' }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toMatch(/"b" is given but an optional parameter before it is not/)
  })
})

describe('catch-all parameters', () => {
  it('keeps the slashes of a catch-all value', () => {
    expect(m.urlFor('files', { path: 'a/b/c.txt' })).toBe('/files/a/b/c.txt')
  })

  it('encodes everything else in a catch-all value', () => {
    expect(m.urlFor('files', { path: 'my docs/café/a?b' })).toBe('/files/my%20docs/caf%C3%A9/a%3Fb')
  })

  it('rejects an empty value for a .+ catch-all', () => {
    const error = errorOf(() => m.urlFor('docs', { path: '' }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toMatch(/urlFor\("docs"\): parameter "path" must not be empty/)
  })
})

describe('query strings', () => {
  it('appends query values, encoded', () => {
    expect(m.urlFor('users.show', { id: 5 }, { q: 'a b&c=d', page: 2 })).toBe(
      '/users/5?q=a%20b%26c%3Dd&page=2',
    )
  })

  it('writes arrays and nested objects with bracketed keys, as PHP http_build_query', () => {
    expect(m.urlFor('team', {}, { tag: ['x', 'y z'], f: { a: { b: 1 } }, n: 1 })).toBe(
      '/about/team?tag%5B0%5D=x&tag%5B1%5D=y%20z&f%5Ba%5D%5Bb%5D=1&n=1',
    )
  })

  it('skips null and undefined values, also inside arrays and objects (lists stay dense)', () => {
    expect(
      m.urlFor(
        'team',
        {},
        { a: null, b: undefined, c: 'kept', d: [null, 'x', [], 'y'], e: { z: null } },
      ),
    ).toBe('/about/team?c=kept&d%5B0%5D=x&d%5B1%5D=y')
  })

  // Regression: arrays were written `tag=x&tag=y`, which fw's parser reads as 'y' (the last one
  // wins), and nested objects as `%5Bobject%20Object%5D`.
  it("round-trips arrays, nested objects and plain values through fw's query parser", () => {
    const query = {
      tags: ['a', 'b c', 'd&e'],
      filter: { status: 'open', range: { from: 1, to: 2 }, ids: [3, 4] },
      list: [{ id: 1 }, { id: 2 }],
      flag: true,
      page: 2,
    }
    const request = FwRequest.create({ uri: m.urlFor('team', {}, query) })
    const expected = {
      tags: ['a', 'b c', 'd&e'],
      filter: { status: 'open', range: { from: '1', to: '2' }, ids: ['3', '4'] },
      list: [{ id: '1' }, { id: '2' }],
      flag: 'true',
      page: '2',
    }
    expect(request.getQueryParams()).toEqual(expected)
    expect(request.query('tags')).toEqual(['a', 'b c', 'd&e'])
    expect(request.query('filter.range.to')).toBe('2')
  })

  it('encodes keys', () => {
    expect(m.urlFor('team', {}, { 'filter[name]': 'bob' })).toBe('/about/team?filter%5Bname%5D=bob')
  })

  it('adds no "?" for an empty query', () => {
    expect(m.urlFor('team', {}, {})).toBe('/about/team')
    expect(m.urlFor('team', {}, { a: null })).toBe('/about/team')
  })
})

describe('absolute URLs', () => {
  it('prefixes the given base scheme, host and port', () => {
    expect(m.urlFor('users.show', { id: 5 }, {}, BASE)).toBe('https://example.com:8443/users/5')
  })

  it('ignores the path of the given base', () => {
    expect(m.urlFor('team', {}, {}, 'https://example.com/ignored/')).toBe(
      'https://example.com/about/team',
    )
  })

  it('puts the query after the path', () => {
    expect(m.urlFor('users.show', { id: 5 }, { tab: 'posts' }, BASE)).toBe(
      'https://example.com:8443/users/5?tab=posts',
    )
  })

  it('uses the default base with absolute true', () => {
    const url = new URL(m.urlFor('users.show', { id: 5 }, { a: '1' }, true))
    expect(url.protocol).toMatch(/^https?:$/)
    expect(url.pathname).toBe('/users/5')
    expect(url.search).toBe('?a=1')
  })

  it('refuses a base that is no absolute URL with a UrlGenerationError naming it', () => {
    const error = errorOf(() => m.urlFor('team', {}, {}, 'example.com'))
    expect(error.name).toBe('UrlGenerationError')
    expect(error.code).toBe('FW_URL_BASE')
    expect(error.message).toMatch(
      /urlFor\("team"\): The base URL "example\.com" is not an absolute URL/,
    )
  })

  it('returns a relative URL with absolute false', () => {
    expect(m.urlFor('users.show', { id: 5 }, {}, false)).toBe('/users/5')
  })

  it('fills the host of a domain route, keeping the base scheme and port', () => {
    expect(m.urlFor('tenant.whoami', { account: 'acme' }, {}, BASE)).toBe(
      'https://acme.example.com:8443/whoami',
    )
    expect(m.urlFor('tenant.user', { account: 'acme', id: 3 }, {}, 'http://localhost')).toBe(
      'http://acme.example.com/users/3',
    )
  })

  it('uses the literal host of a domain route', () => {
    expect(m.urlFor('admin', {}, {}, BASE)).toBe('https://admin.example.com:8443/dashboard')
  })

  it('lowercases a domain parameter value', () => {
    expect(m.urlFor('tenant.whoami', { account: 'ACME' }, {}, BASE)).toBe(
      'https://acme.example.com:8443/whoami',
    )
  })

  it('rejects a domain parameter value that is not a single host label', () => {
    for (const account of ['a.b', 'a b', 'a/b']) {
      const error = errorOf(() => m.urlFor('tenant.whoami', { account }, {}, BASE))
      expect(error.code).toBe('FW_URL_PARAM')
      expect(error.message).toContain('"account"')
    }
  })

  it('takes a label with "_", which a Host may carry and routing matches', () => {
    expect(m.urlFor('tenant.whoami', { account: 'a_b' }, {}, BASE)).toBe(
      'https://a_b.example.com:8443/whoami',
    )
    expect(m.match('GET', '/whoami', 'a_b.example.com')).toMatchObject({
      params: { account: 'a_b' },
    })
  })

  it('still needs the domain parameters for a relative URL', () => {
    expect(m.urlFor('tenant.whoami', { account: 'acme' })).toBe('/whoami')
    const error = errorOf(() => m.urlFor('tenant.whoami'))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toContain('"account"')
  })
})

describe('the default base for absolute URLs', () => {
  const saved = process.env.APP_URL
  afterAll(() => {
    if (saved === undefined) delete process.env.APP_URL
    else process.env.APP_URL = saved
  })

  it('is http://localhost when APP_URL is unset', async () => {
    delete process.env.APP_URL
    const fresh = await compileRoutes(register)
    expect(fresh.urlFor('users.show', { id: 5 }, {}, true)).toBe('http://localhost/users/5')
    expect(fresh.urlFor('tenant.whoami', { account: 'acme' }, {}, true)).toBe(
      'http://acme.example.com/whoami',
    )
  })

  it('is APP_URL when set, without its trailing slash', async () => {
    process.env.APP_URL = 'https://app.test:8080/'
    const fresh = await compileRoutes(register)
    expect(fresh.urlFor('users.show', { id: 5 }, {}, true)).toBe('https://app.test:8080/users/5')
  })
})

describe('errors', () => {
  it('rejects an unknown route name with FW_URL_UNKNOWN_ROUTE', () => {
    const error = errorOf(() => m.urlFor('users.shwo', { id: 1 }))
    expect(error.code).toBe('FW_URL_UNKNOWN_ROUTE')
    expect(error.message).toBe('urlFor: there is no route named "users.shwo"')
  })

  it('does not resolve names inherited from Object.prototype', () => {
    expect(errorOf(() => m.urlFor('toString')).code).toBe('FW_URL_UNKNOWN_ROUTE')
    expect(errorOf(() => m.urlFor('__proto__')).code).toBe('FW_URL_UNKNOWN_ROUTE')
  })

  it('rejects a missing required parameter, naming it', () => {
    const error = errorOf(() => m.urlFor('users.post', { id: 1 }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toBe('urlFor("users.post"): missing required parameter "post"')
  })

  it('rejects null for a required parameter', () => {
    const error = errorOf(() => m.urlFor('users.show', { id: null }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toContain('missing required parameter "id"')
  })

  it('rejects an unknown extra parameter, pointing at the query argument', () => {
    const error = errorOf(() => m.urlFor('users.show', { id: 1, page: 2 }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toMatch(/urlFor\("users.show"\): unknown parameter "page"/)
    expect(error.message).toMatch(/query values as the third argument/)
  })

  it('rejects a non-integer for an int parameter', () => {
    const error = errorOf(() => m.urlFor('users.show', { id: 'abc' }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toBe('urlFor("users.show"): parameter "id" "abc" does not match int')
  })

  it('rejects negative and fractional numbers for an int parameter', () => {
    expect(errorOf(() => m.urlFor('users.show', { id: -1 })).code).toBe('FW_URL_PARAM')
    expect(errorOf(() => m.urlFor('users.show', { id: 1.5 })).code).toBe('FW_URL_PARAM')
  })

  it('rejects a value that violates a custom regex, naming the regex', () => {
    const error = errorOf(() => m.urlFor('code', { code: 'abcd' }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toContain('parameter "code" "abcd" does not match [A-Z]{3}')
  })

  it('checks the whole value against the constraint', () => {
    expect(errorOf(() => m.urlFor('code', { code: 'ABCD' })).code).toBe('FW_URL_PARAM')
    expect(errorOf(() => m.urlFor('slug', { s: 'Hello World' })).code).toBe('FW_URL_PARAM')
  })

  it('rejects an empty string for a parameter', () => {
    const error = errorOf(() => m.urlFor('tags.show', { tag: '' }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toBe('urlFor("tags.show"): parameter "tag" must not be empty')
  })

  it('rejects an empty string for an optional parameter', () => {
    expect(errorOf(() => m.urlFor('opt', { name: '' })).code).toBe('FW_URL_PARAM')
  })

  it('rejects values that are neither strings nor numbers', () => {
    const error = errorOf(() => m.urlFor('tags.show', { tag: { a: 1 } }))
    expect(error.code).toBe('FW_URL_PARAM')
    expect(error.message).toMatch(/must be a string or a number, got object/)
  })
})
