/**
 * Regressions found by the third audit of the request object: what a browser form, a cookie
 * named like Express's session cookie, or a PSR-7 style copy gave the user, and should not have.
 */
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { eventually, listDir, MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()

describe('an empty file input of a browser form', () => {
  // Browsers send an empty <input type="file"> as filename="" with Content-Type
  // application/octet-stream and no content.
  it('is no uploaded file, and leaves no temp file behind', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([
      { name: 'title', value: 'Holiday' },
      { name: 'avatar', filename: '', content: '' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(res.body.files).toEqual({})
    expect(res.body.input).toEqual({ title: 'Holiday' })
    expect(await eventually(async () => (await listDir(dir)).length === 0)).toBe(true)
  })

  it('file(key) is null for it, and a real file beside it is still there', async () => {
    const { port } = await serve({ uploadDir: await freshDir() }, (request) => ({
      avatar: request.file('avatar'),
      photo: (request.file('photo') as { getSize(): number } | null)?.getSize() ?? null,
    }))
    const body = multipart([
      { name: 'avatar', filename: '', content: '' },
      { name: 'photo', filename: 'p.png', type: 'image/png', content: 'PNG' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.body).toEqual({ avatar: null, photo: 3 })
  })

  it('keeps the content of a file part whose name has no base name (".") instead of dropping it', async () => {
    const { port } = await serve({ uploadDir: await freshDir() })
    const body = multipart([{ name: 'doc', filename: '.', content: 'kept' }])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.body.files.doc).toMatchObject([{ name: null, size: 4, content: 'kept' }])
  })
})

describe('cookies with dots in their names', () => {
  it('cookie() finds connect.sid and next-auth.session-token by their names', async () => {
    const { port } = await serve({}, (request) => ({
      sid: request.cookie('connect.sid'),
      auth: request.cookie('next-auth.session-token'),
      missing: request.cookie('connect', 'none'),
    }))
    const res = await send(port, {
      method: 'GET',
      headers: { cookie: 'connect.sid=s%3Aabc.def; next-auth.session-token=tok' },
    })
    expect(res.body).toEqual({ sid: 's:abc.def', auth: 'tok', missing: 'none' })
  })

  it('still reads a nested value given by withCookieParams with a dotted path', () => {
    const request = FwRequest.create().withCookieParams({ prefs: { theme: 'dark' } })
    expect(request.cookie('prefs.theme')).toBe('dark')
  })
})

describe('headers added by with*', () => {
  it('are listed by getHeaders() in lowercase, as create() and the wire list them', () => {
    const request = FwRequest.create({ headers: { 'X-Given': 'a' } })
      .withHeader('X-Tenant', 'acme')
      .withAddedHeader('X-Trace', ['1', '2'])
      .withAddedHeader('x-tenant', 'beta')
    expect(request.getHeaders()).toEqual({
      'x-given': ['a'],
      host: ['localhost'],
      'x-tenant': ['acme', 'beta'],
      'x-trace': ['1', '2'],
    })
    expect(request.getHeaderLine('X-TENANT')).toBe('acme, beta')
  })
})

describe('withParsedBody(null)', () => {
  it('gives a request whose getParsedBody() is null (PSR-7) and whose input is empty', () => {
    const json = FwRequest.create({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    const cleared = json.withParsedBody(null)
    expect(cleared.getParsedBody()).toBeNull()
    expect(cleared.input()).toEqual({})
    expect(cleared.json()).toBeNull()
    expect(json.getParsedBody()).toEqual({ a: 1 })
  })
})

describe('getUri() of a target that is not a path', () => {
  it('is scheme://host for OPTIONS * over HTTP (RFC 9112 3.3), not "http://host*"', async () => {
    const { port } = await serve({}, (request) => ({ uri: request.getUri() }))
    const res = await send(port, { method: 'OPTIONS', path: '*', headers: { host: 'bank.test' } })
    expect(res.body).toEqual({ uri: 'http://bank.test' })
  })

  it('never glues a path without a leading slash to the host', () => {
    const request = FwRequest.create({ headers: { host: 'bank.test' } }).withUri('.evil.test/x?a=1')
    expect(request.getUri()).toBe('http://bank.test/.evil.test/x?a=1')
    expect(new URL(request.getUri()).host).toBe('bank.test')
  })
})

describe('[] after named or numbered keys (PHP: the largest integer key plus one, else 0)', () => {
  it('appends at 0 after a named key, and after the largest index, in forms and queries', async () => {
    const { port } = await serve()
    const body = 'a[x]=1&a[]=2&b[5]=x&b[]=y&c[]=p&c[]=q&c[1]=r'
    const res = await send(port, {
      path: '/?q[name]=n&q[]=first',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    })
    expect(res.body.input).toEqual({
      a: { x: '1', '0': '2' },
      b: { '5': 'x', '6': 'y' },
      c: ['p', 'r'],
    })
    expect(res.body.query).toEqual({ q: { name: 'n', '0': 'first' } })
  })
})
