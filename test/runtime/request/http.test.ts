/**
 * The request object over real HTTP: node:http servers on port 0 build an FwRequest, await
 * loadBody() and answer what they parsed. Multipart has its own file.
 */
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { gzipSync, deflateSync } from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { rawExchange } from '../../support/raw-http.js'
import { send, useServers, type Handler } from './helpers.js'

const { serve } = useServers()

const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

describe('bodies over HTTP', () => {
  it('parses a JSON body for json() and dotted input(), the query apart', async () => {
    const { port } = await serve({}, async (r) => ({
      city: r.input('user.address.city'),
      item: r.input('items.0.name'),
      page: r.input('page'),
      query: r.query('page'),
      json: r.json(),
      post: r.post(),
    }))
    const body = JSON.stringify({ user: { address: { city: 'London' } }, items: [{ name: 'a' }] })
    const res = await send(port, { path: '/x?page=2', headers: JSON_TYPE, body })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      city: 'London',
      item: 'a',
      page: null,
      query: '2',
      json: { user: { address: { city: 'London' } }, items: [{ name: 'a' }] },
      post: {},
    })
  })

  it('parses nested urlencoded keys, readable through post() on POST', async () => {
    const { port } = await serve()
    const body = 'a[b]=1&c[]=2&c[]=3&name=Ada+Lovelace&e=%E2%82%AC'
    const res = await send(port, { headers: FORM_TYPE, body })
    const expected = { a: { b: '1' }, c: ['2', '3'], name: 'Ada Lovelace', e: '€' }
    expect(res.body.input).toEqual(expected)
    expect(res.body.post).toEqual(expected)
    expect(res.body.content).toBe(body)
  })

  it('reads form data for any method, but post() only for POST', async () => {
    const { port } = await serve()
    const res = await send(port, { method: 'PUT', headers: FORM_TYPE, body: 'a=1' })
    expect(res.body.input).toEqual({ a: '1' })
    expect(res.body.post).toEqual({})
  })

  it('decompresses gzip and deflate bodies', async () => {
    const { port } = await serve()
    const json = JSON.stringify({ hello: 'world' })
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
    ] as const) {
      const res = await send(port, {
        headers: { ...JSON_TYPE, 'content-encoding': encoding },
        body,
      })
      expect(res.body.input).toEqual({ hello: 'world' })
    }
  })

  it('answers 415 for an unknown Content-Encoding', async () => {
    const { port } = await serve()
    const res = await send(port, { headers: { 'content-encoding': 'zstd' }, body: 'x' })
    expect(res.status).toBe(415)
  })

  it('gives an empty input for a request without body', async () => {
    const { port } = await serve()
    const res = await send(port, { method: 'GET', path: '/?q=1' })
    expect(res.body).toMatchObject({
      input: {},
      query: { q: '1' },
      json: null,
      content: '',
      files: {},
    })
  })

  it('keeps raw content of other types, without parsing it', async () => {
    const { port } = await serve()
    const res = await send(port, { headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2' })
    expect(res.body).toMatchObject({ input: {}, content: 'a,b\n1,2' })
  })
})

describe('body limits over HTTP', () => {
  const limits = { body: 100 }

  it('accepts exactly the limit and refuses one byte more with 413', async () => {
    const { port } = await serve({ limits })
    const ok = await send(port, {
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(100),
    })
    expect(ok.status).toBe(200)
    expect(ok.body.content).toHaveLength(100)
    const over = await send(port, {
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(101),
    })
    expect(over.status).toBe(413)
  })

  it('answers 413 from the declared Content-Length before the body arrives', async () => {
    const { port } = await serve({ limits })
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        port,
        host: '127.0.0.1',
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'content-length': String(10 ** 9) },
      })
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0)
        req.destroy()
      })
      req.on('error', reject)
      req.write('only a little')
    })
    expect(status).toBe(413)
  })

  it('counts chunked bodies, which declare no length', async () => {
    const { port } = await serve({ limits })
    const headers = { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }
    expect((await send(port, { headers, body: 'x'.repeat(100) })).status).toBe(200)
    expect((await send(port, { headers, body: 'x'.repeat(101) })).status).toBe(413)
  })

  it('applies the limit after decompression (a gzip bomb is a 413)', async () => {
    const { port } = await serve({ limits: { body: 1024 } })
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024))
    expect(bomb.length).toBeLessThan(1024 * 20)
    const headers = { ...JSON_TYPE, 'content-encoding': 'gzip' }
    const res = await send(port, { headers, body: bomb })
    expect(res.status).toBe(413)
  })

  it('fails the load with 400 when the client leaves mid-body, and keeps serving', async () => {
    const failures: unknown[] = []
    const server = createServer((req, res) => {
      const request = FwRequest.fromNode(req)
      request.loadBody().then(
        () => res.end(JSON.stringify(request.json())),
        (error: unknown) => (failures.push(error), res.end()),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
        )
        setTimeout(() => socket.destroy(), 50)
      })
      await vi.waitFor(() => expect(failures).toHaveLength(1))
      expect(failures[0]).toMatchObject({
        status: 400,
        message: 'Request body aborted by the client',
      })
      const after = await send(port, { headers: JSON_TYPE, body: '{"a":1}' })
      expect(after).toEqual({ status: 200, body: { a: 1 } })
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('answers 400 Malformed JSON body', async () => {
    const { port } = await serve()
    const res = await send(port, { headers: JSON_TYPE, body: '{"a":' })
    expect(res).toEqual({ status: 400, body: { error: 'Malformed JSON body' } })
  })

  it('answers 413 for JSON deeper or wider than the limits', async () => {
    const { port } = await serve({ limits: { depth: 3, keys: 5 } })
    const deep = await send(port, { headers: JSON_TYPE, body: '{"a":{"b":{"c":{"d":1}}}}' })
    expect(deep.status).toBe(413)
    const wide = await send(port, {
      headers: JSON_TYPE,
      body: '{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}',
    })
    expect(wide.status).toBe(413)
    // Keys count at every level, through arrays: a, b, c, d, e, f.
    const spread = await send(port, {
      headers: JSON_TYPE,
      body: '{"a":{"b":1,"c":2},"d":[{"e":1},{"f":2}]}',
    })
    expect(spread.status).toBe(413)
    const five = await send(port, {
      headers: JSON_TYPE,
      body: '{"a":{"b":1,"c":2},"d":[{"e":1},[2]]}',
    })
    expect(five.status).toBe(200)
    const fine = await send(port, { headers: JSON_TYPE, body: '{"a":{"b":{"c":1}}}' })
    expect(fine.status).toBe(200)
  })

  it('answers 413 for urlencoded bodies with too many parameters', async () => {
    const { port } = await serve({ limits: { keys: 3 } })
    expect((await send(port, { headers: FORM_TYPE, body: 'a=1&b=2&c=3' })).status).toBe(200)
    expect((await send(port, { headers: FORM_TYPE, body: 'a=1&b=2&c=3&d=4' })).status).toBe(413)
  })
})

describe('prototype pollution over HTTP', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  it('drops __proto__ and constructor keys in urlencoded bodies and queries', async () => {
    const { port } = await serve()
    const body = '__proto__[polluted]=1&constructor[prototype][x]=1&a[__proto__][polluted]=1&ok=1'
    const res = await send(port, { path: '/?__proto__[polluted]=1&q=1', headers: FORM_TYPE, body })
    expect(res.body.input).toEqual({ ok: '1' })
    expect(res.body.query).toEqual({ q: '1' })
  })

  it('drops __proto__ keys in JSON bodies', async () => {
    const { port } = await serve({}, async (r) => ({
      input: r.input(),
      polluted: r.input('polluted'),
      viaPath: r.input('__proto__.polluted'),
      only: r.only('__proto__', 'ok'),
      toString: r.has('toString'),
    }))
    const body = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"ok":1}'
    const res = await send(port, { headers: JSON_TYPE, body })
    expect(res.body).toEqual({
      input: { ok: 1 },
      polluted: null,
      viaPath: null,
      only: { ok: 1 },
      toString: false,
    })
  })
})

describe('proxies and method override over HTTP', () => {
  const report: Handler = (r) => ({
    secure: r.isSecure(),
    scheme: r.getScheme(),
    host: r.getHost(),
    uri: r.getUri(),
    method: r.getMethod(),
    original: r.getOriginalMethod(),
    client: r.getClientAddress(),
  })
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'Shop.Example.com' }

  it('honours X-Forwarded-* from a trusted peer (loopback by default)', async () => {
    const { port } = await serve({}, report)
    const res = await send(port, { method: 'GET', path: '/a?b=1', headers: forwarded })
    expect(res.body).toMatchObject({
      secure: true,
      scheme: 'https',
      host: 'shop.example.com',
      uri: 'https://shop.example.com/a?b=1',
      client: '127.0.0.1',
    })
  })

  it('ignores X-Forwarded-* from an untrusted peer', async () => {
    const { port } = await serve({ trustProxy: () => false }, report)
    const res = await send(port, { method: 'GET', path: '/a', headers: forwarded })
    expect(res.body).toMatchObject({
      secure: false,
      scheme: 'http',
      host: '127.0.0.1',
      uri: `http://127.0.0.1:${port}/a`,
    })
  })

  it('gives the socket addresses as server params, also after withUri()', async () => {
    const { port } = await serve({}, (r) => {
      const moved = r.withUri('https://b.test/x')
      const pick = (q: typeof r) => {
        const p = q.getServerParams()
        return [p.REMOTE_ADDR, typeof p.REMOTE_PORT, p.SERVER_ADDR, p.SERVER_PORT]
      }
      return { plain: pick(r), moved: pick(moved), secure: moved.isSecure(), host: moved.getHost() }
    })
    const res = await send(port, { method: 'GET' })
    const expected = ['127.0.0.1', 'string', '127.0.0.1', String(port)]
    expect(res.body).toEqual({ plain: expected, moved: expected, secure: true, host: 'b.test' })
  })

  it('applies X-Http-Method-Override on POST only, uppercased, never to GET', async () => {
    const { port } = await serve({}, report)
    const override = async (method: string, value: string) =>
      (await send(port, { method, headers: { 'x-http-method-override': value } })).body
    expect(await override('POST', 'patch')).toMatchObject({ method: 'PATCH', original: 'POST' })
    expect(await override('POST', 'DELETE')).toMatchObject({ method: 'DELETE' })
    expect(await override('POST', 'GET')).toMatchObject({ method: 'POST' })
    expect(await override('POST', 'head')).toMatchObject({ method: 'POST' })
    expect(await override('POST', 'P@TCH')).toMatchObject({ method: 'POST' })
    expect(await override('PUT', 'DELETE')).toMatchObject({ method: 'PUT' })
  })
})

describe('headers over HTTP', () => {
  it('finds headers whatever their case, keeps repeated ones in order, and lists them all', async () => {
    const { port } = await serve({}, (r) => ({
      line: r.getHeaderLine('x-tag'),
      values: r.getHeader('X-TAG'),
      has: [r.hasHeader('X-Tag'), r.hasHeader('x-missing')],
      missing: r.getHeader('x-missing'),
      agent: r.getHeaderLine('user-agent'),
      all: r.getHeaders(),
    }))
    const reply = await rawExchange(port, [
      'GET / HTTP/1.0', // no chunked answer to decode
      'Host: example.test',
      'X-Tag: one',
      'User-Agent: probe/1',
      'x-TAG: two',
      'Connection: close',
    ])
    const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))
    expect(body).toEqual({
      line: 'one, two',
      values: ['one', 'two'],
      has: [true, false],
      missing: [],
      agent: 'probe/1',
      all: {
        host: ['example.test'],
        'x-tag': ['one', 'two'],
        'user-agent': ['probe/1'],
        connection: ['close'],
      },
    })
  })

  it('reads the headers it acts on (body, proxy, override) whatever their case', async () => {
    const { port } = await serve({}, (r) => ({
      input: r.input(),
      secure: r.isSecure(),
      host: r.getHost(),
      method: r.getMethod(),
    }))
    const body = '{"a":1}'
    const reply = await rawExchange(port, [
      'POST / HTTP/1.0',
      'HOST: example.test',
      'CONTENT-TYPE: application/json',
      `Content-LENGTH: ${body.length}`,
      'X-Forwarded-PROTO: https',
      'X-HTTP-Method-Override: patch',
      '',
      body,
    ])
    const answer = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))
    expect(answer).toEqual({ input: { a: 1 }, secure: true, host: 'example.test', method: 'PATCH' })
  })

  const statusAndBody = (reply: string): { status: number; body: unknown } => ({
    status: Number(reply.slice(9, 12)),
    body: JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)),
  })

  it('takes the host of an absolute-form target over the Host header (RFC 9112 3.2.2)', async () => {
    const { port } = await serve({}, (r) => ({
      host: r.getHost(),
      port: r.getPort(),
      path: r.getPath(),
      query: r.query(),
    }))
    const reply = await rawExchange(port, [
      'GET http://Acme.Example:8080/a/b?c=1 HTTP/1.0',
      'Host: other.test',
    ])
    expect(statusAndBody(reply)).toEqual({
      status: 200,
      body: { host: 'acme.example', port: 8080, path: '/a/b', query: { c: '1' } },
    })
  })

  it('refuses with 400 a request whose host is not one well-formed host[:port]', async () => {
    const { port } = await serve({}, (r) => ({ host: r.getHost() }))
    const cases: Array<[string[], string]> = [
      [['GET / HTTP/1.0', 'Host: evil.test', 'Host: acme.test'], 'More than one Host header'],
      [['GET / HTTP/1.0', 'Host: acme.test, evil.test'], 'Invalid Host header'],
      [['GET / HTTP/1.0', 'Host: acme.test:abc'], 'Invalid Host header'],
      [['GET / HTTP/1.0', 'Host: acme.test:70000'], 'Invalid Host header'],
      [
        ['GET http://user@acme.test/ HTTP/1.0', 'Host: acme.test'],
        'Invalid host in the request target',
      ],
      // The target or a trusted X-Forwarded-Host naming the host does not excuse a second Host line.
      [
        ['GET http://acme.test/ HTTP/1.0', 'Host: acme.test', 'Host: acme.test'],
        'More than one Host header',
      ],
      [
        ['GET / HTTP/1.0', 'Host: evil.test', 'Host: acme.test', 'X-Forwarded-Host: acme.test'],
        'More than one Host header',
      ],
    ]
    for (const [lines, error] of cases) {
      expect(statusAndBody(await rawExchange(port, lines))).toEqual({
        status: 400,
        body: { error },
      })
    }
    // No Host at all on HTTP/1.0 is allowed: the address the connection came in on.
    expect(statusAndBody(await rawExchange(port, ['GET / HTTP/1.0']))).toEqual({
      status: 200,
      body: { host: '127.0.0.1' },
    })
  })

  it('takes the last forwarded value over several field lines, as one comma list', async () => {
    const { port } = await serve({}, (r) => ({
      scheme: r.getScheme(),
      host: r.getHost(),
      path: r.getPath(),
    }))
    const reply = await rawExchange(port, [
      'GET /a/b?c=1 HTTP/1.0',
      'Host: example.test',
      'X-Forwarded-Proto: http',
      'X-Forwarded-Host: first.test, second.test',
      'x-forwarded-proto: https',
    ])
    const answer = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))
    expect(answer).toEqual({ scheme: 'https', host: 'second.test', path: '/a/b' })
  })
})
