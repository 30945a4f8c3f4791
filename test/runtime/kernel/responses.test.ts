/**
 * Response factories (spec route-definition rules 5 and 6): json, create, noContent, redirect and
 * view through the kernel's default TemplateViews, and the immutability of derived responses.
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  create,
  FwResponse,
  json,
  noContent,
  redirect,
  view,
} from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { TemplateViews } from '../../../src/runtime/views.js'
import { bootKernel, call, cleanupTempDirs, jsonOf, serve, textOf } from './support.js'

afterAll(cleanupTempDirs)

describe('response factories', () => {
  it('header(): a name not set is undefined, also one Object.prototype has', () => {
    const response = json({ id: 1 }).withHeader('x-request-id', 'abc')
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(response.header(name), name).toBeUndefined()
    expect(json({}).header('constructor')).toBeUndefined()
    expect(response.header('X-Request-Id')).toBe('abc')
  })

  it('json: the data as JSON with 200, or the status and headers given', () => {
    const plain = json({ id: 1 })
    expect(plain.status).toBe(200)
    expect(plain.header('content-type')).toBe('application/json; charset=utf-8')
    expect(plain.body).toBe('{"id":1}')
    const created = json({ id: 2 }, 201, { Location: '/things/2' })
    expect(created.status).toBe(201)
    expect(created.header('location')).toBe('/things/2')
    expect(json(undefined).body).toBe('null')
  })

  it('create: text/plain unless a content type is given, with the status and headers given', () => {
    const text = create('hello', 201, { location: '/things/9' })
    expect(text.status).toBe(201)
    expect(text.header('content-type')).toBe('text/plain; charset=utf-8')
    expect(text.header('location')).toBe('/things/9')
    expect(text.body).toBe('hello')
    const csv = create('a,b', 200, { 'Content-Type': 'text/csv' })
    expect(csv.header('content-type')).toBe('text/csv')
  })

  it('noContent: 204 with no body', () => {
    const response = noContent({ 'x-trace': '1' })
    expect(response.status).toBe(204)
    expect(response.body).toBeNull()
    expect(response.header('x-trace')).toBe('1')
  })

  it('redirect: 302 by default with Location, or the status given', () => {
    const found = redirect('/login?next=%2Fhome')
    expect(found.status).toBe(302)
    expect(found.header('location')).toBe('/login?next=%2Fhome')
    expect(found.body).toBeNull()
    expect(redirect('https://example.com/', 308).status).toBe(308)
  })

  it('redirect: refuses a URL containing CR or LF (header injection)', () => {
    expect(() => redirect('/ok\r\nSet-Cookie: session=stolen')).toThrow(TypeError)
    expect(() => redirect('/ok\nX-Evil: 1')).toThrow(TypeError)
    expect(() => redirect('/ok\rX-Evil: 1')).toThrow(TypeError)
  })

  it('withHeader, withHeaders and withStatus return copies and leave the original untouched', () => {
    const original = json({ ok: true }, 200, { 'X-One': '1' })
    const added = original.withHeader('X-Two', '2')
    const replaced = added.withHeader('x-one', 'uno')
    const many = original.withHeaders({ 'X-A': 'a', 'X-B': ['b1', 'b2'] })
    const moved = original.withStatus(202)
    expect(original.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'content-length': '11',
      'x-one': '1',
    })
    expect(original.status).toBe(200)
    expect(added).not.toBe(original)
    expect(added.header('x-two')).toBe('2')
    expect(replaced.header('X-One')).toBe('uno')
    expect(added.header('x-one')).toBe('1')
    expect(many.header('x-b')).toBe('b1, b2')
    expect(moved.status).toBe(202)
    expect(moved.body).toBe(original.body)
  })

  it('keeps headers added by withHeader through further copies, replacing an added one when set again', () => {
    const base = create('hi', 200, { 'X-One': '1' })
    const stamped = base.withHeader('X-Two', '2').withHeader('x-three', ['a', 'b']).withStatus(201)
    expect(stamped.headers).toEqual({
      'content-type': 'text/plain; charset=utf-8',
      'x-one': '1',
      'x-two': '2',
      'x-three': ['a', 'b'],
    })
    expect(stamped.withHeader('X-TWO', 'again').header('x-two')).toBe('again')
    expect(stamped.withHeaders({ 'x-four': '4' }).headers).toMatchObject({
      'x-two': '2',
      'x-four': '4',
    })
    expect(base.headers).toEqual({ 'content-type': 'text/plain; charset=utf-8', 'x-one': '1' })
  })

  it('gives writeHead the header object itself, or one flat list with added headers and Content-Length', () => {
    const plain = json({ ok: true })
    expect(FwResponse.wireHeaders(plain)).toBe(plain.headers)
    expect(FwResponse.wireHeaders(plain.withHeader('X-Id', 'abc'))).toEqual([
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      '11',
      'x-id',
      'abc',
    ])
    expect(FwResponse.wireHeaders(create('héllo'))).toEqual([
      'content-type',
      'text/plain; charset=utf-8',
      'content-length',
      '6',
    ])
    expect(FwResponse.wireHeaders(create('x').withHeader('content-length', '1'))).toEqual([
      'content-type',
      'text/plain; charset=utf-8',
      'content-length',
      '1',
    ])
    expect(FwResponse.wireHeaders(noContent({ 'x-a': 'a' }))).toEqual({ 'x-a': 'a' })
    // A header whose value spells another header's name does not count as that header.
    const exposed = create('hi').withHeader('access-control-expose-headers', 'content-length')
    expect(FwResponse.wireHeaders(exposed)).toEqual([
      'content-type',
      'text/plain; charset=utf-8',
      'access-control-expose-headers',
      'content-length',
      'content-length',
      '2',
    ])
    // fw frames a string body itself: a caller's Content-Length gives way to the body's.
    expect(exposed.withHeader('content-length', '9')).toBe(exposed)
    const bodiless = new FwResponse(
      200,
      { 'access-control-expose-headers': 'content-length' },
      null,
    )
    expect(bodiless.withHeader('content-length', '0').headers).toEqual({
      'access-control-expose-headers': 'content-length',
      'content-length': '0',
    })
  })

  it('lowercases header names given to the constructor', () => {
    expect(new FwResponse(200, { 'X-Mixed-Case': 'v' }).headers).toEqual({ 'x-mixed-case': 'v' })
  })
})

describe('responses through the kernel', () => {
  const views = new TemplateViews({
    templates: {
      hello: '<p>{{ name }} {{{ raw }}}</p>',
      profile: '<h1>{{ user.name }}</h1><p>{{ user.missing }}|{{ absent }}</p>',
    },
  })
  const stamp: Middleware = async (request, next) =>
    (await next(request)).withHeader('x-stamped', 'yes')
  const register = (r: any): void => {
    r.get('/hello', () => view('hello', { name: '<b>Ada & "Bob"</b>', raw: '<i>trusted</i>' }))
    r.get('/profile', () => view('profile', { user: { name: "O'Neil <3" } }, 201), {
      middleware: [stamp],
    })
    r.get('/missing-view', () => view('no-such-template'))
    r.post('/things', () => json({ id: 1 }, 201, { location: '/things/1' }))
    r.get('/bad-redirect', (request: any) => redirect(`/next${request.query('to')}`))
  }

  it('sends the headers middleware added, a repeated one as separate lines, over HTTP', async () => {
    const kernel = await bootKernel((r: any) => {
      const cookies: Middleware = async (request, next) =>
        (await next(request)).withHeader('set-cookie', ['a=1', 'b=2'])
      r.get('/stamped', () => json({ ok: true }), { middleware: [stamp, cookies] })
    })
    const server = await serve(kernel)
    try {
      const response = await server.send('GET', '/stamped')
      expect(response.status).toBe(200)
      expect(response.headers['x-stamped']).toBe('yes')
      expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2'])
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      expect(response.headers['content-length']).toBe('11')
      expect(response.text).toBe('{"ok":true}')
    } finally {
      await server.close()
    }
  })

  it('answers 500 when a response cannot be written (a header Node refuses), and keeps serving', async () => {
    const kernel = await bootKernel((r: any) => {
      const broken = (): FwResponse => new FwResponse(200, { 'x-broken': 'a\r\nb' }, 'never sent')
      r.get('/broken', broken)
      r.get('/broken-later', broken, { middleware: [stamp] })
      r.get('/fine', () => json({ ok: true }))
    })
    const server = await serve(kernel)
    try {
      // Answered synchronously, then through a middleware's promise: both write paths.
      for (const path of ['/broken', '/broken-later']) {
        const response = await server.send('GET', path)
        expect(response.status).toBe(500)
        expect(JSON.parse(response.text)).toEqual({
          error: 'Internal Server Error',
          code: 500,
          request_id: response.headers['x-request-id'],
        })
        expect(response.headers['cache-control']).toBe('no-store')
        expect(response.headers['x-broken']).toBeUndefined()
      }
      expect((await server.send('GET', '/fine')).text).toBe('{"ok":true}')
    } finally {
      await server.close()
    }
  })

  it('renders a view with escaped {{ }} and raw {{{ }}} values as text/html', async () => {
    const kernel = await bootKernel(register, { views })
    const response = await call(kernel, '/hello')
    expect(response.status).toBe(200)
    expect(response.header('content-type')).toBe('text/html; charset=utf-8')
    expect(await textOf(response)).toBe(
      '<p>&lt;b&gt;Ada &amp; &quot;Bob&quot;&lt;/b&gt; <i>trusted</i></p>',
    )
  })

  it('renders dotted keys, blanks for missing ones, and keeps the status and headers middleware added', async () => {
    const kernel = await bootKernel(register, { views })
    const response = await call(kernel, '/profile')
    expect(response.status).toBe(201)
    expect(response.header('x-stamped')).toBe('yes')
    expect(await textOf(response)).toBe('<h1>O&#39;Neil &lt;3</h1><p>|</p>')
  })

  it('sends a rendered view over HTTP with its Content-Length', async () => {
    const server = await serve(await bootKernel(register, { views }))
    try {
      const reply = await server.send('GET', '/hello')
      expect(reply.text).toBe('<p>&lt;b&gt;Ada &amp; &quot;Bob&quot;&lt;/b&gt; <i>trusted</i></p>')
      expect(reply.headers['content-length']).toBe(String(Buffer.byteLength(reply.text)))
    } finally {
      await server.close()
    }
  })

  it('answers an unknown view with the generic 500 error response instead of failing the request', async () => {
    const kernel = await bootKernel(register, { views })
    const response = await call(kernel, '/missing-view')
    expect(response.status).toBe(500)
    expect(response.header('cache-control')).toBe('no-store')
    expect(await jsonOf(response)).toMatchObject({ error: 'Internal Server Error', code: 500 })
  })

  it('answers a 201 creation with its Location header', async () => {
    const kernel = await bootKernel(register, { views })
    const response = await call(kernel, { method: 'POST', uri: '/things' })
    expect(response.status).toBe(201)
    expect(response.header('location')).toBe('/things/1')
    expect(await jsonOf(response)).toEqual({ id: 1 })
  })

  it('turns a redirect to a URL with a line break into a 500, never a split header', async () => {
    const kernel = await bootKernel(register, { views })
    const response = await call(kernel, {
      uri: '/bad-redirect',
      query: { to: '\r\nSet-Cookie: a=b' },
    })
    expect(response.status).toBe(500)
    expect(response.header('set-cookie')).toBeUndefined()
    expect(response.header('location')).toBeUndefined()
  })
})
