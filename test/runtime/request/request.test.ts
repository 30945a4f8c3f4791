/** FwRequest accessors (spec table), the rules on method, URI and proxies, and the constructors. */
import { describe, expect, it } from 'vitest'
import { compileTrust } from '../../../src/runtime/request/options.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { send, startServer } from './helpers.js'

const outside = { REMOTE_ADDR: '203.0.113.9' }

describe('method', () => {
  it('reports and compares the method case-insensitively', () => {
    const r = FwRequest.create({ method: 'put' })
    expect(r.getMethod()).toBe('PUT')
    expect(r.isMethod('put')).toBe(true)
    expect(r.isPut()).toBe(true)
    expect([r.isGet(), r.isPost(), r.isPatch(), r.isDelete(), r.isHead(), r.isOptions()]).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ])
    for (const m of ['GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
      const req = FwRequest.create({ method: m })
      const check = {
        GET: req.isGet,
        POST: req.isPost,
        PATCH: req.isPatch,
        DELETE: req.isDelete,
        HEAD: req.isHead,
        OPTIONS: req.isOptions,
      }
      expect(check[m as keyof typeof check].call(req)).toBe(true)
    }
  })

  it.each([
    ['POST', 'patch', 'PATCH'],
    ['POST', ' Delete ', 'DELETE'],
    ['POST', 'GET', 'POST'],
    ['POST', 'head', 'POST'],
    ['POST', 'CONNECT', 'POST'],
    ['POST', 'trace', 'POST'],
    ['POST', 'PUT;rm', 'POST'],
    ['POST', '', 'POST'],
    ['GET', 'DELETE', 'GET'],
    ['PUT', 'PATCH', 'PUT'],
    // Regressions: an unknown method became a 405 whose Allow listed POST.
    ['POST', 'BREW', 'POST'],
    ['POST', 'options', 'OPTIONS'],
  ])('%s with X-Http-Method-Override %j is %s', (method, value, expected) => {
    const r = FwRequest.create({ method, headers: { 'X-Http-Method-Override': value } })
    expect(r.getMethod()).toBe(expected)
    expect(r.getOriginalMethod()).toBe(method)
  })

  it('leaves a POST a POST when X-Http-Method-Override comes twice (which one to trust?)', () => {
    const r = FwRequest.create({
      method: 'POST',
      headers: { 'X-Http-Method-Override': ['DELETE', 'PATCH'] },
    })
    expect(r.getMethod()).toBe('POST')
  })
})

describe('URI', () => {
  it('splits an absolute URI into scheme, host, port, path and query', () => {
    const r = FwRequest.create({ uri: 'https://Example.COM:8443/a%20b/c?x=1&y[]=2' })
    expect(r.getScheme()).toBe('https')
    expect(r.isSecure()).toBe(true)
    expect(r.getHost()).toBe('example.com')
    expect(r.getPort()).toBe(8443)
    expect(r.getPath()).toBe('/a%20b/c')
    expect(r.getPathInfo()).toBe('/a%20b/c')
    expect(r.getBaseUrl()).toBe('')
    expect(r.getQueryString()).toBe('x=1&y[]=2')
    expect(r.getSchemeAndHttpHost()).toBe('https://example.com:8443')
    expect(r.getUri()).toBe('https://example.com:8443/a%20b/c?x=1&y[]=2')
  })

  it('defaults the port by scheme and leaves it out of the URI', () => {
    expect(FwRequest.create({ uri: 'https://a.test/' }).getPort()).toBe(443)
    const plain = FwRequest.create({ uri: '/p' })
    expect(plain.getPort()).toBe(80)
    expect(plain.getHost()).toBe('localhost')
    expect(plain.getUri()).toBe('http://localhost/p')
  })

  it('reads an IPv6 host with its port', () => {
    const r = FwRequest.create({ headers: { host: '[::1]:3000' } })
    expect([r.getHost(), r.getPort(), r.getSchemeAndHttpHost()]).toEqual([
      '[::1]',
      3000,
      'http://[::1]:3000',
    ])
  })

  it('refuses a Host header that is not a host with a 400, rather than guessing one', () => {
    for (const host of ['evil.com/x', 'a b', 'evil.com:99999', 'x@y']) {
      const r = FwRequest.create({ headers: { host } })
      expect(() => r.getHost()).toThrow(
        expect.objectContaining({ status: 400, message: 'Invalid Host header' }),
      )
    }
  })

  it('honours X-Forwarded-Proto/-Host/-Port from a trusted peer only', () => {
    const headers = {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'Shop.example',
      'x-forwarded-port': '8443',
      host: 'internal:3000',
    }
    const trusted = FwRequest.create({ headers })
    expect(trusted.getUri()).toBe('https://shop.example:8443/')
    const untrusted = FwRequest.create({ headers, server: outside })
    expect(untrusted.isSecure()).toBe(false)
    expect(untrusted.getUri()).toBe('http://internal:3000/')
  })

  it('takes the value the trusted proxy appended, not the one the client sent before it', () => {
    const r = FwRequest.create({ headers: { 'x-forwarded-proto': 'https, http' } })
    expect(r.getScheme()).toBe('http')
    expect(FwRequest.create({ headers: { 'x-forwarded-proto': 'gopher' } }).getScheme()).toBe(
      'http',
    )
  })

  it('trusts exactly the configured proxies (TRUSTED_PROXIES replaces the loopback default)', () => {
    const options = { trustProxy: compileTrust('10.0.0.0/8, 192.168.1.1') }
    const headers = { 'x-forwarded-proto': 'https' }
    const via = (addr: string) =>
      FwRequest.create({ headers, server: { REMOTE_ADDR: addr } }, options).isSecure()
    expect([via('10.1.2.3'), via('192.168.1.1'), via('127.0.0.1'), via('8.8.8.8')]).toEqual([
      true,
      true,
      false,
      false,
    ])
    const loopbackDefault = { trustProxy: compileTrust('') }
    expect(
      FwRequest.create(
        { headers, server: { REMOTE_ADDR: '127.0.0.1' } },
        loopbackDefault,
      ).isSecure(),
    ).toBe(true)
  })

  it('gives the client address without the IPv4-mapped prefix', () => {
    const r = FwRequest.create({ server: { REMOTE_ADDR: '::ffff:198.51.100.7' } })
    expect(r.getClientAddress()).toBe('198.51.100.7')
    expect(FwRequest.create({ server: { REMOTE_ADDR: '2001:db8::1' } }).getClientAddress()).toBe(
      '2001:db8::1',
    )
  })
})

describe('query, headers, cookies, server params, attributes', () => {
  it('reads the query: all, one dotted key, several keys with null for missing', () => {
    const r = FwRequest.create({ uri: '/?a[b]=1&c=2', query: { d: '4' } })
    expect(r.query()).toEqual({ a: { b: '1' }, c: '2', d: '4' })
    expect(r.query('a.b')).toBe('1')
    expect(r.query('zz', 'dflt')).toBe('dflt')
    expect(r.query('zz')).toBeNull()
    expect(r.query(['c', 'zz'])).toEqual({ c: '2', zz: null })
    expect(r.getQueryParams()).toEqual(r.query())
    expect(r.getQueryString()).toBe('a%5Bb%5D=1&c=2&d=4')
  })

  it('reads headers case-insensitively', () => {
    const r = FwRequest.create({
      headers: { 'X-Token': 'a', Accept: ['text/html', 'application/json'] },
    })
    expect(r.hasHeader('x-token')).toBe(true)
    expect(r.getHeader('ACCEPT')).toEqual(['text/html', 'application/json'])
    expect(r.getHeaderLine('accept')).toBe('text/html, application/json')
    expect(r.getHeader('missing')).toEqual([])
    expect(r.getHeaderLine('missing')).toBe('')
    // Lowercase names, as a request off the wire lists them.
    expect(r.getHeaders()).toEqual({
      'x-token': ['a'],
      accept: ['text/html', 'application/json'],
      host: ['localhost'],
    })
  })

  it('refuses header values with line breaks', () => {
    expect(() => FwRequest.create().withHeader('x', 'a\r\nSet-Cookie: b')).toThrow(TypeError)
    expect(() => FwRequest.create().withHeader('bad name', 'a')).toThrow(TypeError)
  })

  it('parses cookies from the Cookie header', () => {
    const r = FwRequest.create({ headers: { cookie: 'sid=a%20b; theme=dark' } })
    expect(r.getCookieParams()).toEqual({ sid: 'a b', theme: 'dark' })
    expect(r.cookie('sid')).toBe('a b')
    expect(r.cookie('none', 'x')).toBe('x')
  })

  it('exposes PHP-style server params', () => {
    const r = FwRequest.create({
      method: 'post',
      uri: '/a?b=1',
      headers: { 'X-Api-Key': 'k', 'Content-Type': 't/p' },
    })
    expect(r.server('REMOTE_ADDR')).toBe('127.0.0.1')
    expect(r.server('REQUEST_METHOD')).toBe('POST')
    expect(r.server('REQUEST_URI')).toBe('/a?b=1')
    expect(r.server('QUERY_STRING')).toBe('b=1')
    expect(r.server('HTTP_X_API_KEY')).toBe('k')
    expect(r.server('CONTENT_TYPE')).toBe('t/p')
    expect(r.server('NOPE', 'd')).toBe('d')
    expect(r.getServerParams()).toMatchObject({
      SERVER_PROTOCOL: 'HTTP/1.1',
      HTTP_HOST: 'localhost',
    })
  })

  it('reads attributes with a default', () => {
    const r = FwRequest.create({ attributes: { client_ip: '1.2.3.4' } })
    expect(r.getAttribute('client_ip')).toBe('1.2.3.4')
    expect(r.getAttribute('missing')).toBeNull()
    expect(r.getAttribute('missing', 7)).toBe(7)
    expect(r.getAttributes()).toEqual({ client_ip: '1.2.3.4' })
  })

  it('computes a computed attribute on first read, once for every copy', () => {
    let calls = 0
    const r = FwRequest.create().withAttributes({ plain: 1 }, { costly: () => ++calls })
    const copy = r.withAttribute('other', 2)
    expect(calls).toBe(0)
    expect(copy.getAttribute('costly')).toBe(1)
    expect(r.getAttribute('costly')).toBe(1)
    expect(r.getAttributes()).toEqual({ plain: 1, costly: 1 })
    expect(calls).toBe(1)
    expect(r.withAttribute('costly', 'set').getAttribute('costly')).toBe('set')
    expect(r.withoutAttribute('costly').getAttribute('costly')).toBeNull()
  })
})

describe('immutability: every with* leaves the original unchanged', () => {
  const original = () =>
    FwRequest.create({
      method: 'POST',
      uri: '/a?q=1',
      headers: { 'x-a': '1', 'content-type': 'application/json' },
      cookies: { c: '1' },
      attributes: { at: 1 },
      body: '{"k":"v"}',
    })

  it.each([
    ['withMethod', (r: FwRequest) => r.withMethod('delete'), (r: FwRequest) => r.getMethod()],
    [
      'withUri',
      (r: FwRequest) => r.withUri('https://b.test/z?q=2'),
      (r: FwRequest) => [r.getUri(), r.query()],
    ],
    [
      'withHeader',
      (r: FwRequest) => r.withHeader('X-A', '2'),
      (r: FwRequest) => r.getHeader('x-a'),
    ],
    [
      'withAddedHeader',
      (r: FwRequest) => r.withAddedHeader('x-a', '2'),
      (r: FwRequest) => r.getHeader('x-a'),
    ],
    [
      'withoutHeader',
      (r: FwRequest) => r.withoutHeader('X-A'),
      (r: FwRequest) => r.hasHeader('x-a'),
    ],
    [
      'withBody',
      (r: FwRequest) => r.withBody('{"k":"w"}'),
      (r: FwRequest) => [r.getContent(), r.input('k')],
    ],
    [
      'withQueryParams',
      (r: FwRequest) => r.withQueryParams({ q: '9' }),
      (r: FwRequest) => r.query(),
    ],
    [
      'withCookieParams',
      (r: FwRequest) => r.withCookieParams({ c: '9' }),
      (r: FwRequest) => r.getCookieParams(),
    ],
    ['withUploadedFiles', (r: FwRequest) => r.withUploadedFiles({}), (r: FwRequest) => r.files()],
    [
      'withParsedBody',
      (r: FwRequest) => r.withParsedBody({ k: 'p' }),
      (r: FwRequest) => r.input('k'),
    ],
    [
      'withAttribute',
      (r: FwRequest) => r.withAttribute('at', 2),
      (r: FwRequest) => r.getAttribute('at'),
    ],
    [
      'withAttributes',
      (r: FwRequest) => r.withAttributes({ at: 3, other: 'x' }),
      (r: FwRequest) => [r.getAttribute('at'), r.getAttribute('other')],
    ],
    [
      'withoutAttribute',
      (r: FwRequest) => r.withoutAttribute('at'),
      (r: FwRequest) => r.getAttribute('at'),
    ],
  ])('%s', (_name, derive, read) => {
    const r = original()
    const before = read(r)
    const derived = derive(r)
    expect(derived).not.toBe(r)
    expect(derived).toBeInstanceOf(FwRequest)
    expect(read(r)).toEqual(before)
    if (_name !== 'withUploadedFiles') expect(read(derived)).not.toEqual(before)
  })

  it('returns copies from accessors, so mutating them changes nothing', () => {
    const r = original()
    ;(r.query() as Record<string, unknown>).q = 'changed'
    ;(r.input() as Record<string, unknown>).k = 'changed'
    r.getHeader('x-a').push('changed')
    expect([r.query('q'), r.input('k'), r.getHeader('x-a')]).toEqual(['1', 'v', ['1']])
  })

  it('sets Host from an absolute URI unless asked to preserve it', () => {
    const r = original()
    expect(r.withUri('http://other.test/').getHost()).toBe('other.test')
    expect(r.withUri('http://other.test/', true).getHost()).toBe('localhost')
  })
})

describe('constructors', () => {
  it('fromWeb reads method, URL, headers and a lazily loaded body', async () => {
    const web = new Request('https://api.example/items?x=1', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'http' },
      body: '{"a":{"b":2}}',
    })
    const r = FwRequest.fromWeb(web, { remoteAddress: '198.51.100.1' })
    expect([r.getMethod(), r.getUri(), r.getHeaderLine('x-forwarded-proto')]).toEqual([
      'PATCH',
      'https://api.example/items?x=1',
      'http',
    ])
    expect(r.isSecure()).toBe(true) // the peer is not a trusted proxy
    expect(() => r.input()).toThrow(/loadBody/)
    await r.loadBody()
    expect(r.input()).toEqual({ a: { b: 2 } })
    expect(r.query()).toEqual({ x: '1' })
    expect(r.server('REMOTE_ADDR')).toBe('198.51.100.1')
  })

  it('fromWeb applies the body limit to the stream', async () => {
    const web = new Request('http://h/', { method: 'POST', body: 'x'.repeat(11) })
    const r = FwRequest.fromWeb(web, { limits: { body: 10 } })
    await expect(r.loadBody()).rejects.toMatchObject({ status: 413 })
  })

  it('fromNode keeps the raw path and fills server params from the socket', async () => {
    const server = await startServer({}, (r) => ({
      path: r.getPath(),
      query: r.getQueryString(),
      remote: r.server('REMOTE_ADDR'),
      port: typeof r.server('REMOTE_PORT'),
      protocol: r.server('SERVER_PROTOCOL'),
      header: r.server('HTTP_X_CUSTOM'),
      host: r.getHost(),
      cookie: r.cookie('a'),
    }))
    try {
      const res = await send(server.port, {
        method: 'GET',
        path: '/caf%C3%A9/a%2Fb?x=%20',
        headers: { 'x-custom': 'v', cookie: 'a=1' },
      })
      expect(res.body).toEqual({
        path: '/caf%C3%A9/a%2Fb',
        query: 'x=%20',
        remote: '127.0.0.1',
        port: 'string',
        protocol: 'HTTP/1.1',
        header: 'v',
        host: '127.0.0.1',
        cookie: '1',
      })
    } finally {
      await server.close()
    }
  })
})
