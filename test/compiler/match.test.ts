import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import type { MatchResult } from '../../src/runtime/load-router.js'
import type { Middleware } from '../../src/runtime/types.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

/** The name and params of a hit, or the miss itself: what a test compares. */
function hit(result: MatchResult): { name: string | null; params: object } | MatchResult {
  return 'route' in result ? { name: result.route.name, params: { ...result.params } } : result
}

describe('static and parameter routes', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/', noop, 'home')
      r.get('/about/team', noop, 'team')
      r.get('/users/{id:int}', noop, 'users.show')
      r.get('/users/{id:int}/posts/{post}', noop, 'users.post')
      r.get('/tags/{tag}', noop, 'tags.show')
      r.get('/slug/{s:slug}', noop, 'slug')
      r.get('/uuid/{u:uuid}', noop, 'uuid')
      r.get('/hex/{h:hex}', noop, 'hex')
      r.get('/code/{code:[A-Z]{3}}', noop, 'code')
      r.get('/opt/{name?}', noop, 'opt')
      r.get('/page/{n?:int}', noop, 'page')
    })
  })

  it('matches "/" and static paths with empty params', () => {
    expect(hit(m.match('GET', '/'))).toEqual({ name: 'home', params: {} })
    expect(hit(m.match('GET', '/about/team'))).toEqual({ name: 'team', params: {} })
  })

  it('gives the matched route its metadata', () => {
    const result = m.match('GET', '/users/7')
    expect(result).toMatchObject({
      route: { method: 'GET', path: '/users/{id:int}', name: 'users.show', host: null },
    })
  })

  it('delivers a plain parameter as a string', () => {
    expect(hit(m.match('GET', '/tags/news'))).toEqual({
      name: 'tags.show',
      params: { tag: 'news' },
    })
  })

  it('delivers an int parameter as a number', () => {
    expect(hit(m.match('GET', '/users/42'))).toEqual({ name: 'users.show', params: { id: 42 } })
    expect(hit(m.match('GET', '/users/007'))).toEqual({ name: 'users.show', params: { id: 7 } })
  })

  it('delivers several parameters by name', () => {
    expect(hit(m.match('GET', '/users/3/posts/hello'))).toEqual({
      name: 'users.post',
      params: { id: 3, post: 'hello' },
    })
  })

  it('accepts an int of 15 digits but not 16', () => {
    expect(hit(m.match('GET', '/users/123456789012345'))).toEqual({
      name: 'users.show',
      params: { id: 123456789012345 },
    })
    expect(m.match('GET', '/users/1234567890123456')).toEqual({ status: 404 })
  })

  it('does not match an int against non-digits', () => {
    expect(m.match('GET', '/users/12a')).toEqual({ status: 404 })
    expect(m.match('GET', '/users/-1')).toEqual({ status: 404 })
    expect(m.match('GET', '/users/1.5')).toEqual({ status: 404 })
  })

  it('matches slug, uuid and hex only when the segment fits', () => {
    expect(hit(m.match('GET', '/slug/hello-world-2'))).toEqual({
      name: 'slug',
      params: { s: 'hello-world-2' },
    })
    expect(m.match('GET', '/slug/Hello')).toEqual({ status: 404 })
    expect(m.match('GET', '/slug/a--b')).toEqual({ status: 404 })
    const uuid = '123E4567-e89b-12d3-a456-426614174000'
    expect(hit(m.match('GET', `/uuid/${uuid}`))).toEqual({ name: 'uuid', params: { u: uuid } })
    expect(m.match('GET', '/uuid/123e4567')).toEqual({ status: 404 })
    expect(hit(m.match('GET', '/hex/DeadBeef'))).toEqual({ name: 'hex', params: { h: 'DeadBeef' } })
    expect(m.match('GET', '/hex/xyz')).toEqual({ status: 404 })
  })

  it('matches a custom regex against the whole segment', () => {
    expect(hit(m.match('GET', '/code/ABC'))).toEqual({ name: 'code', params: { code: 'ABC' } })
    expect(m.match('GET', '/code/ABCD')).toEqual({ status: 404 })
    expect(m.match('GET', '/code/AB')).toEqual({ status: 404 })
    expect(m.match('GET', '/code/abc')).toEqual({ status: 404 })
  })

  it('gives null for an absent optional parameter', () => {
    expect(hit(m.match('GET', '/opt'))).toEqual({ name: 'opt', params: { name: null } })
    expect(hit(m.match('GET', '/opt/bob'))).toEqual({ name: 'opt', params: { name: 'bob' } })
    expect(hit(m.match('GET', '/page'))).toEqual({ name: 'page', params: { n: null } })
    expect(hit(m.match('GET', '/page/3'))).toEqual({ name: 'page', params: { n: 3 } })
    expect(m.match('GET', '/page/x')).toEqual({ status: 404 })
  })

  it('fills several trailing optional parameters from the left', async () => {
    const two = await compileRoutes((r) => r.get('/opt/{a?}/{b?}', noop, 'two'))
    expect(hit(two.match('GET', '/opt'))).toEqual({ name: 'two', params: { a: null, b: null } })
    expect(hit(two.match('GET', '/opt/1'))).toEqual({ name: 'two', params: { a: '1', b: null } })
    expect(hit(two.match('GET', '/opt/1/2'))).toEqual({ name: 'two', params: { a: '1', b: '2' } })
    expect(two.match('GET', '/opt//2')).toEqual({ status: 404 })
  })

  it('matches a path with a trailing slash like the same path without it', () => {
    expect(hit(m.match('GET', '/about/team/'))).toEqual({ name: 'team', params: {} })
    expect(hit(m.match('GET', '/users/42/'))).toEqual({ name: 'users.show', params: { id: 42 } })
    expect(hit(m.match('GET', '/opt/'))).toEqual({ name: 'opt', params: { name: null } })
  })

  it('does not match an empty segment as a parameter', () => {
    expect(m.match('GET', '/tags//')).toEqual({ status: 404 })
    expect(m.match('GET', '/users//posts/x')).toEqual({ status: 404 })
  })

  it('answers 404 for unknown paths and extra segments', () => {
    expect(m.match('GET', '/nope')).toEqual({ status: 404 })
    expect(m.match('GET', '/about/team/extra')).toEqual({ status: 404 })
    expect(m.match('GET', '/about')).toEqual({ status: 404 })
  })

  it('answers 404 for a path that does not start with "/"', () => {
    expect(m.match('GET', 'about/team')).toEqual({ status: 404 })
    expect(m.match('GET', '')).toEqual({ status: 404 })
  })

  it('matches static segments case-sensitively', () => {
    expect(m.match('GET', '/About/Team')).toEqual({ status: 404 })
  })
})

describe('long static paths among paths of their length', () => {
  it('matches each static path exactly, and a dynamic path of the same length still reaches its route', async () => {
    // Three 20-character statics (compared with character probes, then ===), two of them equal
    // but in their last character, and a parameter route that matches 20-character paths too:
    // a probe that tested the wrong position or code would turn a hit away.
    const m = await compileRoutes((r) => {
      r.get('/search/repositories', noop, 'repos')
      r.get('/search/repositoriez', noop, 'reposz')
      r.get('/search/issues/items', noop, 'items')
      r.get('/users/{name}', noop, 'user')
    })
    expect(hit(m.match('GET', '/search/repositories'))).toEqual({ name: 'repos', params: {} })
    expect(hit(m.match('GET', '/search/repositoriez'))).toEqual({ name: 'reposz', params: {} })
    expect(hit(m.match('GET', '/search/issues/items'))).toEqual({ name: 'items', params: {} })
    expect(hit(m.match('GET', '/users/julienschmidt'))).toEqual({
      name: 'user',
      params: { name: 'julienschmidt' },
    })
    expect(m.match('GET', '/search/repositoriex')).toEqual({ status: 404 })
    expect(m.match('GET', '/xearch/repositories')).toEqual({ status: 404 })
    // A fresh (sliced) string, as a server's parser gives, is the same path.
    const sliced = '/pad/search/repositories'.slice(4)
    expect(hit(m.match('GET', sliced))).toEqual({ name: 'repos', params: {} })
  })
})

describe('404 or 405 when only one method has routes under a first segment', () => {
  it('still sees the static paths of other methods and answers 405 for them', async () => {
    const m = await compileRoutes((r) => {
      r.get('/users/{id}', noop, 'users.show')
      r.post('/users', noop, 'users.store')
      r.put('/users/{id}/avatar', noop, 'users.avatar')
    })
    expect(m.match('GET', '/users')).toEqual({ status: 405, allow: ['POST'] })
    expect(m.match('POST', '/users/7')).toEqual({ status: 405, allow: ['GET', 'HEAD'] })
    expect(m.match('GET', '/users/7/avatar')).toEqual({ status: 405, allow: ['PUT'] })
    expect(m.match('GET', '/users/7/nope')).toEqual({ status: 404 })
    expect(m.match('DELETE', '/users/7/avatar/x')).toEqual({ status: 404 })
  })
})

describe('methods', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/items', noop, 'items.index')
      r.post('/items', noop, 'items.store')
      r.head('/explicit', noop, 'explicit.head')
      r.get('/explicit', noop, 'explicit.get')
      r.options('/all', noop)
      r.delete('/all', noop)
      r.patch('/all', noop)
      r.put('/all', noop)
      r.post('/all', noop)
      r.get('/all', noop)
      r.post('/post-only', noop)
      r.put('/things/{id:int}', noop)
      r.get('/things/{id:int}', noop)
    })
  })

  it('picks the route of the request method', () => {
    expect(hit(m.match('GET', '/items'))).toMatchObject({ name: 'items.index' })
    expect(hit(m.match('POST', '/items'))).toMatchObject({ name: 'items.store' })
  })

  it('answers HEAD with the GET route when there is no HEAD route', () => {
    expect(hit(m.match('HEAD', '/items'))).toMatchObject({ name: 'items.index' })
    const result = m.match('HEAD', '/things/5')
    expect(result).toMatchObject({ route: { method: 'GET' }, params: { id: 5 } })
  })

  it('prefers an explicit HEAD route over the GET fallback', () => {
    expect(hit(m.match('HEAD', '/explicit'))).toMatchObject({ name: 'explicit.head' })
    expect(hit(m.match('GET', '/explicit'))).toMatchObject({ name: 'explicit.get' })
  })

  it('answers 405 with the allowed methods when the path exists for other methods', () => {
    expect(m.match('DELETE', '/items')).toEqual({ status: 405, allow: ['GET', 'HEAD', 'POST'] })
  })

  it('lists allowed methods in the order GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS', () => {
    expect(m.match('TRACE', '/all')).toEqual({
      status: 405,
      allow: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    })
  })

  it('does not list HEAD for a path without GET', () => {
    expect(m.match('GET', '/post-only')).toEqual({ status: 405, allow: ['POST'] })
    expect(m.match('HEAD', '/post-only')).toEqual({ status: 405, allow: ['POST'] })
  })

  it('answers 405 for parameter routes too', () => {
    expect(m.match('DELETE', '/things/5')).toEqual({ status: 405, allow: ['GET', 'HEAD', 'PUT'] })
  })

  it('answers 404, not 405, when no method has the path', () => {
    expect(m.match('DELETE', '/missing')).toEqual({ status: 404 })
    expect(m.match('DELETE', '/things/abc')).toEqual({ status: 404 })
  })
})

describe('precedence', () => {
  const routes = {
    static: (r: Registrar) => r.get('/p/new', noop, 'static'),
    int: (r: Registrar) => r.get('/p/{id:int}', noop, 'int'),
    plain: (r: Registrar) => r.get('/p/{name}', noop, 'plain'),
  }

  it.each([
    ['static, int, plain', ['static', 'int', 'plain'] as const],
    ['plain, int, static', ['plain', 'int', 'static'] as const],
    ['int, plain, static', ['int', 'plain', 'static'] as const],
  ])(
    'prefers static > constrained > plain > catch-all when registered as %s',
    async (_label, order) => {
      const m = await compileRoutes((r) => {
        for (const kind of order) routes[kind](r)
        r.get('/p/{rest:.*}', noop, 'catchall')
      })
      expect(hit(m.match('GET', '/p/new'))).toEqual({ name: 'static', params: {} })
      expect(hit(m.match('GET', '/p/12'))).toEqual({ name: 'int', params: { id: 12 } })
      expect(hit(m.match('GET', '/p/abc'))).toEqual({ name: 'plain', params: { name: 'abc' } })
      expect(hit(m.match('GET', '/p/a/b'))).toEqual({ name: 'catchall', params: { rest: 'a/b' } })
      expect(hit(m.match('GET', '/p'))).toEqual({ name: 'catchall', params: { rest: '' } })
    },
  )

  it('prefers a custom regex over a plain parameter registered first', async () => {
    const m = await compileRoutes((r) => {
      r.get('/c/{any}', noop, 'plain')
      r.get('/c/{code:[A-Z]{3}}', noop, 'code')
    })
    expect(hit(m.match('GET', '/c/ABC'))).toEqual({ name: 'code', params: { code: 'ABC' } })
    expect(hit(m.match('GET', '/c/abc'))).toEqual({ name: 'plain', params: { any: 'abc' } })
  })

  it('backtracks when a more specific branch fails deeper down', async () => {
    const m = await compileRoutes((r) => {
      r.get('/a/{x}/b', noop, 'param')
      r.get('/a/c/d', noop, 'static')
    })
    expect(hit(m.match('GET', '/a/c/b'))).toEqual({ name: 'param', params: { x: 'c' } })
    expect(hit(m.match('GET', '/a/c/d'))).toEqual({ name: 'static', params: {} })
    expect(m.match('GET', '/a/c/e')).toEqual({ status: 404 })
  })

  it('backtracks from a static branch to a catch-all', async () => {
    const m = await compileRoutes((r) => {
      r.get('/docs/api/index', noop, 'index')
      r.get('/docs/{path:.+}', noop, 'docs')
    })
    expect(hit(m.match('GET', '/docs/api/other'))).toEqual({
      name: 'docs',
      params: { path: 'api/other' },
    })
  })
})

describe('encoding', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/f/{name}', noop, 'file')
      r.get('/files/{p:.*}', noop, 'files')
      r.get('/hello world', noop, 'space')
      r.get('/café', noop, 'cafe')
      r.get('/pair/{a}/{id:int}/{b}/{rest:.*}', noop, 'pair')
    })
  })

  it('decodes each of several parameters, wherever the escapes are', () => {
    const pair = (path: string, params: object) =>
      expect(hit(m.match('GET', path))).toEqual({ name: 'pair', params })
    pair('/pair/x/1/y/z', { a: 'x', id: 1, b: 'y', rest: 'z' })
    pair('/pair/x%20y/1/z/w', { a: 'x y', id: 1, b: 'z', rest: 'w' })
    pair('/pair/x/1/y%2Fz/w', { a: 'x', id: 1, b: 'y/z', rest: 'w' })
    pair('/pair/x/1/y/%C3%A9/t', { a: 'x', id: 1, b: 'y', rest: 'é/t' })
    pair('/pair/%41/1/%42/%43', { a: 'A', id: 1, b: 'B', rest: 'C' })
    expect(m.match('GET', '/pair/x/1/%zz/w')).toEqual({ status: 400 })
    expect(m.match('GET', '/pair/x/1/y/%C3')).toEqual({ status: 400 })
  })

  it('keeps %2F inside one segment value, decoded to "/"', () => {
    expect(hit(m.match('GET', '/f/a%2Fb'))).toEqual({ name: 'file', params: { name: 'a/b' } })
  })

  it('percent-decodes parameter values', () => {
    expect(hit(m.match('GET', '/f/caf%C3%A9%20au%20lait'))).toEqual({
      name: 'file',
      params: { name: 'café au lait' },
    })
  })

  it('answers 400 for a malformed escape in a parameter', () => {
    expect(m.match('GET', '/f/%E0%A4%A')).toEqual({ status: 400 })
    expect(m.match('GET', '/f/%zz')).toEqual({ status: 400 })
    expect(m.match('GET', '/files/a/%C3')).toEqual({ status: 400 })
  })

  it('decodes a catch-all value but keeps its slashes', () => {
    expect(hit(m.match('GET', '/files/a%20b/c'))).toEqual({
      name: 'files',
      params: { p: 'a b/c' },
    })
  })

  it('matches literals with spaces or non-ASCII in their encoded form', () => {
    expect(hit(m.match('GET', '/hello%20world'))).toEqual({ name: 'space', params: {} })
    expect(hit(m.match('GET', '/caf%C3%A9'))).toEqual({ name: 'cafe', params: {} })
  })
})

describe('equivalent spellings of a path (RFC 3986 6.2.2)', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/hello', noop, 'hello')
      r.get('/n/{id:int}', noop, 'int')
      r.get('/n/{name}', noop, 'plain')
      r.get('/code/{c:[A-Z]{3}}', noop, 'code')
      r.get('/café', noop, 'cafe')
      r.get('/%41bc', noop, 'abc')
      r.put('/only-put/{id:int}', noop, 'put')
    })
  })

  it('matches escaped unreserved characters as the characters themselves', () => {
    expect(hit(m.match('GET', '/h%65llo'))).toEqual({ name: 'hello', params: {} })
    expect(hit(m.match('GET', '/code/%41BC'))).toEqual({ name: 'code', params: { c: 'ABC' } })
    expect(hit(m.match('GET', '/Abc'))).toEqual({ name: 'abc', params: {} })
    expect(hit(m.match('GET', '/%41bc'))).toEqual({ name: 'abc', params: {} })
  })

  it('gives an escaped number to the int route, not to the plain parameter that also fits', () => {
    expect(hit(m.match('GET', '/n/%34%32'))).toEqual({ name: 'int', params: { id: 42 } })
    expect(hit(m.match('GET', '/n/4%32/'))).toEqual({ name: 'int', params: { id: 42 } })
    expect(hit(m.match('GET', '/n/%34x'))).toEqual({ name: 'plain', params: { name: '4x' } })
  })

  it('matches lowercase hex in an escape like uppercase', () => {
    expect(hit(m.match('GET', '/caf%c3%a9'))).toEqual({ name: 'cafe', params: {} })
    expect(hit(m.match('GET', '/caf%C3%A9'))).toEqual({ name: 'cafe', params: {} })
  })

  it('decodes nothing twice and keeps reserved escapes in their segment', () => {
    expect(hit(m.match('GET', '/n/%2541'))).toEqual({ name: 'plain', params: { name: '%41' } })
    expect(hit(m.match('GET', '/n/%34%2F2'))).toEqual({ name: 'plain', params: { name: '4/2' } })
    expect(m.match('GET', '/n/%34%zz')).toEqual({ status: 400 })
  })

  it('answers 405 for an escaped path that only another method has', () => {
    expect(m.match('GET', '/only-put/%31')).toEqual({ status: 405, allow: ['PUT'] })
    expect(hit(m.match('PUT', '/only-put/%31'))).toEqual({ name: 'put', params: { id: 1 } })
    expect(m.match('GET', '/h%65llo/x')).toEqual({ status: 404 })
  })
})

describe('regex parameters', () => {
  it('match the whole segment, alternatives included, whatever the path string is', async () => {
    const m = await compileRoutes((r) => {
      r.get('/alt/{p:a|ab}', noop, 'alt')
      r.get('/code/{c:[A-Z]{3}}/x', noop, 'code')
    })
    const sliced = (path: string): string => `/padding-to-make-a-sliced-string${path}`.slice(32)
    for (const view of [(p: string) => p, sliced]) {
      expect(hit(m.match('GET', view('/alt/ab')))).toEqual({ name: 'alt', params: { p: 'ab' } })
      expect(hit(m.match('GET', view('/code/ABC/x')))).toEqual({
        name: 'code',
        params: { c: 'ABC' },
      })
      expect(m.match('GET', view('/code/ABCD/x'))).toEqual({ status: 404 })
      expect(m.match('GET', view('/alt/abc'))).toEqual({ status: 404 })
    }
  })

  it('see the path around them when they use word boundaries or lookbehind, as in a whole-path pattern', async () => {
    const m = await compileRoutes((r) => {
      r.get('/word/{p:\\bw\\w*}', noop, 'word')
      r.get('/behind/{p:(?<=/)ab}', noop, 'behind')
      r.get('/after/{p:(?<=after/)cd}', noop, 'after')
    })
    expect(hit(m.match('GET', '/word/wow'))).toEqual({ name: 'word', params: { p: 'wow' } })
    expect(hit(m.match('GET', '/behind/ab'))).toEqual({ name: 'behind', params: { p: 'ab' } })
    expect(hit(m.match('GET', '/after/cd'))).toEqual({ name: 'after', params: { p: 'cd' } })
    expect(m.match('GET', '/behind/xab')).toEqual({ status: 404 })
  })

  // Regression: `^`/`$` were tested against the whole path, so `{x:^ab$}` never matched (a dead
  // route, built silently). At the ends of a constraint they are the segment's own anchors.
  it('take a leading "^" and a trailing "$" as the segment anchors they imply', async () => {
    const m = await compileRoutes((r) => {
      r.get('/anchored/{p:^x}', noop, 'anchored')
      r.get('/both/{p:^ab$}/tail', noop, 'both')
      r.get('/alts/{p:^a$|^b\\$$}', noop, 'alts')
    })
    expect(hit(m.match('GET', '/anchored/x'))).toEqual({ name: 'anchored', params: { p: 'x' } })
    expect(hit(m.match('GET', '/both/ab/tail'))).toEqual({ name: 'both', params: { p: 'ab' } })
    expect(m.match('GET', '/both/abc/tail')).toEqual({ status: 404 })
    expect(hit(m.match('GET', '/alts/a'))).toEqual({ name: 'alts', params: { p: 'a' } })
    expect(hit(m.match('GET', '/alts/b$'))).toEqual({ name: 'alts', params: { p: 'b$' } })
    expect(m.routes.find((route) => route.name === 'both')?.path).toBe('/both/{p:^ab$}/tail')
  })
})

describe('catch-alls and slash-capable regexes', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/files/{p:.*}', noop, 'any')
      r.get('/docs/{p:.+}', noop, 'some')
      r.get('/r/{p:[^x]+}', noop, 'regex')
    })
  })

  it('matches the empty rest with .*, with or without the trailing slash', () => {
    expect(hit(m.match('GET', '/files'))).toEqual({ name: 'any', params: { p: '' } })
    expect(hit(m.match('GET', '/files/'))).toEqual({ name: 'any', params: { p: '' } })
  })

  it('matches the rest of the path, slashes included', () => {
    expect(hit(m.match('GET', '/files/a/b/c.txt'))).toEqual({
      name: 'any',
      params: { p: 'a/b/c.txt' },
    })
    expect(hit(m.match('GET', '/docs/guide/intro'))).toEqual({
      name: 'some',
      params: { p: 'guide/intro' },
    })
  })

  it('does not match the empty rest with .+', () => {
    expect(m.match('GET', '/docs')).toEqual({ status: 404 })
    expect(m.match('GET', '/docs/')).toEqual({ status: 404 })
  })

  it('does not treat a prefix of the literal as the catch-all base', () => {
    expect(m.match('GET', '/filesystem')).toEqual({ status: 404 })
  })

  it('keeps a regex that could match "/" to one segment', () => {
    expect(hit(m.match('GET', '/r/abc'))).toEqual({ name: 'regex', params: { p: 'abc' } })
    expect(m.match('GET', '/r/a/b')).toEqual({ status: 404 })
    expect(m.match('GET', '/r/axb')).toEqual({ status: 404 })
  })
})

describe('domain routes', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.group({ domain: '{account}.example.com', name: 'tenant.' }, (r) => {
        r.get('/whoami', noop, 'whoami')
        r.get('/users/{id:int}', noop, 'user')
      })
      r.group({ domain: 'admin.example.com' }, (r) => r.get('/dashboard', noop, 'admin'))
      r.get('/whoami', noop, 'whoami')
      r.get('/public', noop, 'public')
    })
  })

  it('adds the domain parameter to the params', () => {
    expect(hit(m.match('GET', '/whoami', 'acme.example.com'))).toEqual({
      name: 'tenant.whoami',
      params: { account: 'acme' },
    })
    expect(hit(m.match('GET', '/users/9', 'acme.example.com'))).toEqual({
      name: 'tenant.user',
      params: { account: 'acme', id: 9 },
    })
  })

  it('matches the host case-insensitively and ignores the port', () => {
    expect(hit(m.match('GET', '/whoami', 'Acme.EXAMPLE.com:8080'))).toMatchObject({
      name: 'tenant.whoami',
    })
    expect(hit(m.match('GET', '/dashboard', 'ADMIN.example.com:443'))).toMatchObject({
      name: 'admin',
    })
  })

  it('prefers a host-specific route over a hostless one', () => {
    expect(hit(m.match('GET', '/whoami', 'acme.example.com'))).toMatchObject({
      name: 'tenant.whoami',
    })
  })

  it('falls back to hostless routes on other hosts and without a host', () => {
    expect(hit(m.match('GET', '/whoami', 'other.test'))).toEqual({ name: 'whoami', params: {} })
    expect(hit(m.match('GET', '/whoami'))).toEqual({ name: 'whoami', params: {} })
    expect(hit(m.match('GET', '/whoami', null))).toEqual({ name: 'whoami', params: {} })
  })

  it('falls back to hostless routes for paths the domain does not have', () => {
    expect(hit(m.match('GET', '/public', 'acme.example.com'))).toEqual({
      name: 'public',
      params: {},
    })
  })

  it('falls back to a hostless GET when the domain has the path only for another method', async () => {
    const mixed = await compileRoutes((r) => {
      r.group({ domain: '{account}.example.com' }, (r) => r.post('/x', noop, 'domain.post'))
      r.get('/x', noop, 'hostless.get')
    })
    expect(hit(mixed.match('GET', '/x', 'acme.example.com'))).toEqual({
      name: 'hostless.get',
      params: {},
    })
    expect(hit(mixed.match('POST', '/x', 'acme.example.com'))).toEqual({
      name: 'domain.post',
      params: { account: 'acme' },
    })
  })

  it('does not serve domain routes on other hosts', () => {
    expect(m.match('GET', '/dashboard', 'other.test')).toEqual({ status: 404 })
    expect(m.match('GET', '/dashboard')).toEqual({ status: 404 })
    expect(m.match('GET', '/users/9', 'a.b.example.com')).toEqual({ status: 404 })
  })
})

describe('routes metadata', () => {
  it('lists every route with its full middleware, group first', async () => {
    const fn: Middleware = function audit(req, next) {
      return next(req)
    }
    const m = await compileRoutes((r) => {
      r.get('/a', noop, 'a')
      r.group({ prefix: '/api', middleware: ['throttle:60,60'], name: 'api.' }, (r) => {
        r.group({ middleware: ['auth'] }, (r) => {
          r.post('/b', noop, { name: 'b', middleware: ['role:admin'] }).withMiddleware(fn)
        })
      })
    })
    expect(m.routes).toHaveLength(2)
    expect(m.routes[0]).toMatchObject({
      id: 0,
      method: 'GET',
      path: '/a',
      name: 'a',
      middleware: [],
    })
    expect(m.routes[1]).toMatchObject({
      id: 1,
      method: 'POST',
      path: '/api/b',
      name: 'api.b',
      middleware: ['throttle:60,60', 'auth', 'role:admin', 'fn:audit'],
    })
  })

  it('is a frozen array of the very records match() returns, however it is first touched', async () => {
    const register = (r: Registrar): void => {
      for (let i = 0; i < 40; i++) r.get(`/r${i}/{id}`, noop, `r${i}`)
      r.post('/r7/{id}', noop, 'r7.post')
    }
    // match() first: the records it parsed are the ones the table holds later.
    const first = await compileRoutes(register)
    const found = first.match('POST', '/r7/x')
    expect('route' in found && found.route === first.routes[40]).toBe(true)
    expect(Array.isArray(first.routes)).toBe(true)
    expect(Object.isFrozen(first.routes)).toBe(true)
    expect(Object.isFrozen(first.routes[3])).toBe(true)
    expect(first.routes.map((route) => route.name).slice(0, 3)).toEqual(['r0', 'r1', 'r2'])
    expect(() => (first.routes as unknown[]).push({})).toThrow(TypeError)
    // The table first: JSON, spreading and keys see every route.
    const second = await compileRoutes(register)
    expect(JSON.parse(JSON.stringify(second.routes))).toHaveLength(41)
    expect([...second.routes].at(-1)).toMatchObject({ id: 40, method: 'POST', name: 'r7.post' })
    expect(Object.keys(second.routes)).toHaveLength(41)
    const again = second.match('GET', '/r39/y')
    expect('route' in again && again.route === second.routes[39]).toBe(true)
  })

  it('carries the same middleware list on a match result', async () => {
    const m = await compileRoutes((r) => {
      r.group({ middleware: ['auth'] }, (r) =>
        r.get('/me', noop, { middleware: ['throttle:5,60'] }),
      )
    })
    expect(m.match('GET', '/me')).toMatchObject({
      route: { middleware: ['auth', 'throttle:5,60'] },
    })
  })
})
