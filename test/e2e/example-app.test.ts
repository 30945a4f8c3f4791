/**
 * The example application over real HTTP: `fw serve --routes routes.example.ts` in a child
 * process, and plain node:http requests against it.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { clientOf, serveApp, type Answer, type ServedApp } from '../support/server.js'

let app: ServedApp

const { send, get } = clientOf(() => app)
const postJson = (
  path: string,
  data: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> =>
  send('POST', path, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(data),
  })

beforeAll(async () => {
  assertBuilt()
  const dir = makeProject()
  // APP_URL unset: absolute URLs use the address fw serve listens on.
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', join(dir, 'cache')], {
    env: { APP_URL: '' },
  })
})

afterAll(async () => {
  expect(await app?.stop()).toBe(0)
  cleanupProjects()
})

describe('the example app: routing', () => {
  it('serves both API versions side by side', async () => {
    expect((await get('/api/v1/users/42')).json()).toEqual({ id: 42, version: 'v1' })
    expect((await get('/api/v2/users/7')).json()).toEqual({ id: 7, version: 'v2' })
  })

  it('echoes every parameter form, with int as a number and an absent optional as null', async () => {
    expect((await get('/demo/int/5')).json()).toEqual({ id: 5 })
    expect((await get('/demo/slug/hello-world')).json()).toEqual({ slug: 'hello-world' })
    expect((await get('/demo/uuid/123e4567-e89b-12d3-a456-426614174000')).json()).toEqual({
      id: '123e4567-e89b-12d3-a456-426614174000',
    })
    expect((await get('/demo/hex/BEEF')).json()).toEqual({ value: 'BEEF' })
    expect((await get('/demo/code/ABC')).json()).toEqual({ code: 'ABC' })
    expect((await get('/demo/optional')).json()).toEqual({ name: null })
    expect((await get('/demo/optional/ada')).json()).toEqual({ name: 'ada' })
    expect((await get('/demo/files/a/b%20c.txt')).json()).toEqual({ path: 'a/b c.txt' })
  })

  it('matches an equivalent spelling of a URL the same way (escaped digits and letters)', async () => {
    expect((await get('/demo/int/%34%32')).json()).toEqual({ id: 42 })
    expect((await get('/demo/code/%41B%43')).json()).toEqual({ code: 'ABC' })
    expect((await get('/api/v1/users/%37')).json()).toEqual({ id: 7, version: 'v1' })
  })

  it('answers the catch-all fallback with 404 {error, path}', async () => {
    const answer = await get('/no/such/page')
    expect(answer.status).toBe(404)
    expect(answer.json()).toEqual({ error: 'Not Found', path: '/no/such/page' })
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect((await get('/demo/code/abcd')).status).toBe(404)
  })

  it('answers 405 with Allow for a known path and another method', async () => {
    const answer = await send('DELETE', '/api/v1/users/1')
    expect(answer.status).toBe(405)
    expect(answer.headers.allow).toBe('GET, HEAD')
    expect(answer.json()).toMatchObject({ error: 'Method Not Allowed', code: 405 })
  })

  it('answers OPTIONS automatically with 204 and Allow where no OPTIONS route exists', async () => {
    const answer = await send('OPTIONS', '/demo/int/1')
    expect(answer.status).toBe(204)
    expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS')
  })

  it('answers HEAD from the GET route without a body', async () => {
    const answer = await send('HEAD', '/api/v1/users/1')
    expect(answer.status).toBe(200)
    expect(answer.text).toBe('')
    expect(answer.headers['content-type']).toMatch(/application\/json/)
  })

  it('serves the domain group with its placeholder as a parameter', async () => {
    const answer = await get('/whoami', { host: `acme.localhost:${app.port}` })
    expect(answer.json()).toEqual({ account: 'acme' })
    expect((await get('/whoami')).status).toBe(404)
  })

  it('answers a malformed percent-escape in a parameter with 400', async () => {
    expect((await get('/demo/optional/%E0%A4%A')).status).toBe(400)
  })
})

describe('the example app: bodies', () => {
  it('echoes a JSON body (input) and the query apart', async () => {
    const answer = await postJson('/demo/echo?page=2', { user: { name: 'Ada' } })
    expect(answer.json()).toEqual({
      method: 'POST',
      type: 'application/json',
      input: { user: { name: 'Ada' } },
      query: { page: '2' },
      files: [],
    })
  })

  it('echoes a urlencoded body with nested keys, for PUT too', async () => {
    const answer = await send('PUT', '/demo/echo', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'user[name]=Ada&tags[]=a&tags[]=b',
    })
    expect(answer.json()).toMatchObject({
      method: 'PUT',
      input: { user: { name: 'Ada' }, tags: ['a', 'b'] },
    })
  })

  it('echoes multipart fields and uploaded files', async () => {
    const boundary = 'fwboundary42'
    const body = [
      `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabcdef\r\n`,
      `--${boundary}--\r\n`,
    ].join('')
    const answer = await send('POST', '/demo/echo', {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    })
    expect(answer.status).toBe(200)
    expect(answer.json()).toMatchObject({
      input: { title: 'hello' },
      files: [{ field: 'doc', name: 'a.txt', size: 6, type: 'text/plain' }],
    })
  })

  it('answers an unsupported body type with 415 {error}', async () => {
    const answer = await send('PATCH', '/demo/echo', {
      headers: { 'content-type': 'text/csv' },
      body: 'a,b',
    })
    expect(answer.status).toBe(415)
    expect(answer.json().error).toMatch(/Unsupported media type/)
  })

  it('answers a request without a body', async () => {
    expect((await send('DELETE', '/demo/echo')).json()).toMatchObject({
      method: 'DELETE',
      type: null,
      input: {},
    })
  })

  it('honours X-Http-Method-Override on POST', async () => {
    const answer = await postJson('/demo/echo', {}, { 'x-http-method-override': 'patch' })
    expect(answer.json().method).toBe('PATCH')
  })

  it('answers malformed JSON with 400 and a body over 1 MiB with 413', async () => {
    expect(
      (
        await send('POST', '/demo/echo', {
          headers: { 'content-type': 'application/json' },
          body: '{"a":',
        })
      ).status,
    ).toBe(400)
    const big = JSON.stringify({ a: 'x'.repeat(1024 * 1024) })
    expect(
      (
        await send('POST', '/demo/echo', {
          headers: { 'content-type': 'application/json' },
          body: big,
        })
      ).status,
    ).toBe(413)
  })
})

describe('the example app: responses and URLs', () => {
  it('creates a resource with 201 and Location', async () => {
    const answer = await postJson('/demo/resource', { name: 'box' })
    expect(answer.status).toBe(201)
    expect(answer.headers.location).toBe('/demo/resource/1')
    expect(answer.json()).toEqual({ id: 1, name: 'box', created: true })
  })

  it('answers its OPTIONS route with Allow and Access-Control-Allow-Methods', async () => {
    const answer = await send('OPTIONS', '/demo/resource')
    expect(answer.status).toBe(204)
    expect(answer.headers.allow).toBe('OPTIONS, POST')
    expect(answer.headers['access-control-allow-methods']).toBe('OPTIONS, POST')
  })

  it('generates relative and absolute URLs with a query', async () => {
    // Without APP_URL, fw serve makes absolute URLs on the address it listens on.
    expect((await get('/demo/url/3')).json()).toEqual({
      relative: '/demo/url/3?tab=posts',
      absolute: `${app.url}/demo/url/3?tab=posts`,
    })
  })

  it('signs a URL that verifies, and rejects a tampered or unsigned one', async () => {
    const { url } = (await get('/demo/sign/9')).json()
    expect(url).toMatch(/^\/demo\/signed\/9\?_exp=\d+&_sig=[0-9a-f]{64}$/)
    expect((await get(url)).json()).toEqual({ id: 9, signed: true })
    expect((await get(url.replace('/9?', '/8?'))).status).toBe(403)
    expect((await get('/demo/signed/9')).status).toBe(400)
    expect((await get(url.replace(/_exp=\d+/, '_exp=soon'))).status).toBe(400)
  })
})

describe('the example app: errors and attributes', () => {
  it('renders a typed HTTP error as JSON with no-store and nosniff', async () => {
    const answer = await get('/demo/error/418')
    expect(answer.status).toBe(418)
    expect(answer.json()).toMatchObject({ error: "I'm a Teapot", code: 418 })
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.json().request_id).toBe(answer.headers['x-request-id'])
  })

  it('gives a 405 its Allow header and a 429 its Retry-After', async () => {
    const notAllowed = await get('/demo/error/405')
    expect([notAllowed.status, notAllowed.headers.allow]).toEqual([405, 'GET, HEAD'])
    const busy = await get('/demo/error/429')
    expect([busy.status, busy.headers['retry-after']]).toEqual([429, '60'])
  })

  it('negotiates problem+json and text/plain error bodies', async () => {
    const problem = await get('/demo/error/409', { accept: 'application/problem+json' })
    expect(problem.headers['content-type']).toBe('application/problem+json')
    expect(problem.json()).toMatchObject({
      title: 'Conflict',
      status: 409,
      instance: '/demo/error/409',
    })
    const text = await get('/demo/error/409', { accept: 'text/plain' })
    expect(text.text).toBe('Conflict\n')
  })

  it('answers an unhandled error with 500 and no details', async () => {
    const answer = await get('/demo/crash')
    expect(answer.status).toBe(500)
    expect(answer.json()).toMatchObject({ error: 'Internal Server Error', code: 500 })
    expect(answer.text).not.toMatch(/boom|at |\.ts/)
  })

  it('negotiates type, charset and locale', async () => {
    const answer = await get('/demo/negotiate', {
      accept: 'text/html, application/json;q=0.5',
      'accept-charset': 'iso-8859-1',
      'accept-language': 'fr, en;q=0.5',
    })
    expect(answer.json()).toEqual({
      'negotiated.type': 'text/html',
      'negotiated.charset': 'iso-8859-1',
      locale: 'fr',
      negotiated: { type: 'text/html', charset: 'iso-8859-1' },
    })
  })

  it('sets client_ip, request_id, trace id and route name', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const answer = await get('/demo/attributes', {
      'x-request-id': 'req-123',
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    })
    expect(answer.json()).toEqual({
      client_ip: '127.0.0.1',
      request_id: 'req-123',
      'trace.trace_id': traceId,
      'route.name': 'demo.attributes',
      trace: { trace_id: traceId },
      route: { name: 'demo.attributes' },
    })
    expect(answer.headers['x-request-id']).toBe('req-123')
  })

  it('replaces a malformed X-Request-Id and honours X-Forwarded-For from loopback (a trusted proxy)', async () => {
    const answer = await get('/demo/attributes', {
      'x-request-id': 'bad id with spaces',
      'x-forwarded-for': '203.0.113.9',
    })
    expect(answer.json().request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.json().client_ip).toBe('203.0.113.9')
  })
})
