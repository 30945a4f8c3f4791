/**
 * The example app against the written contract (DESIGN.md "The example application" and
 * "Behaviour the specification leaves open", spec "Errors" and "Limits"), over real HTTP: the
 * rows example-app.test.ts does not pin down already.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { clientOf, serveApp, type Answer, type ServedApp } from '../support/server.js'

const SIGNING_KEY = 'conformance-signing-key-of-32-bytes-or-more'

let app: ServedApp

const { send, get } = clientOf(() => app)

/** A signature made as DESIGN.md says: hex HMAC-SHA256 of `path?query` without `_sig`. */
const sign = (payload: string): string =>
  createHmac('sha256', SIGNING_KEY).update(payload).digest('hex')

beforeAll(async () => {
  assertBuilt()
  const dir = makeProject()
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', join(dir, 'cache')], {
    env: { APP_URL: '', URL_SIGNING_KEYS: SIGNING_KEY },
  })
})

afterAll(async () => {
  expect(await app?.stop()).toBe(0)
  cleanupProjects()
})

describe('conformance: routing misses', () => {
  it('lists the path methods in Allow on a 405, HEAD where GET exists, joined with ", "', async () => {
    const answer = await send('PUT', '/api/v2/users/3')
    expect(answer.status).toBe(405)
    expect(answer.headers.allow).toBe('GET, HEAD')
    expect(answer.json()).toEqual({
      error: 'Method Not Allowed',
      code: 405,
      request_id: answer.headers['x-request-id'],
    })
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
  })

  it('answers OPTIONS without an OPTIONS route with 204 and every method of the path', async () => {
    const answer = await send('OPTIONS', '/demo/echo')
    expect(answer.status).toBe(204)
    expect(answer.text).toBe('')
    expect(answer.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS')
  })

  it('answers HEAD with the GET status and headers and no body, errors included', async () => {
    const found = await send('HEAD', '/demo/int/5')
    expect([found.status, found.text, found.headers['content-length']]).toEqual([200, '', '8'])
    const missing = await send('HEAD', '/no/such/page')
    expect([missing.status, missing.text]).toEqual([404, ''])
    expect(missing.headers['cache-control']).toBe('no-store')
  })

  it('matches a trailing slash as the same route, and gives the fallback the path without query', async () => {
    expect((await get('/demo/int/5/')).json()).toEqual({ id: 5 })
    expect((await get('/demo/optional/')).json()).toEqual({ name: null })
    const fallback = await get('/no/such/page?x=1')
    expect([fallback.status, fallback.json()]).toEqual([
      404,
      { error: 'Not Found', path: '/no/such/page' },
    ])
  })

  it('serves the domain group whatever the case and port of the Host header', async () => {
    const answer = await get('/whoami/', { host: `ACME.localhost:${app.port}` })
    expect([answer.status, answer.json()]).toEqual([200, { account: 'acme' }])
  })
})

describe('conformance: error bodies', () => {
  it('negotiates a routing 405 and an unhandled 500 like typed errors', async () => {
    const problem = await send('DELETE', '/api/v1/users/1', {
      headers: { accept: 'application/problem+json' },
    })
    expect(problem.headers['content-type']).toBe('application/problem+json')
    expect(problem.headers.allow).toBe('GET, HEAD')
    expect(problem.json()).toMatchObject({
      type: 'about:blank',
      title: 'Method Not Allowed',
      status: 405,
      instance: '/api/v1/users/1',
    })
    const text = await get('/demo/crash', { accept: 'text/plain' })
    expect([text.status, text.text]).toEqual([500, 'Internal Server Error\n'])
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(text.headers['x-content-type-options']).toBe('nosniff')
    const json = await get('/demo/crash', { accept: 'application/json' })
    expect(json.json()).toEqual({
      error: 'Internal Server Error',
      code: 500,
      request_id: json.headers['x-request-id'],
    })
  })

  it('gives a 401 its WWW-Authenticate: Bearer challenge', async () => {
    const answer = await get('/demo/error/401')
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer')
  })
})

describe('conformance: bodies', () => {
  it('answers 415 {error} to a body without a Content-Type', async () => {
    const answer = await send('POST', '/demo/echo', { body: 'a,b' })
    expect(answer.status).toBe(415)
    expect(answer.json().error).toMatch(/Unsupported media type/)
  })

  it('accepts a JSON body of exactly 1 MiB and refuses one byte more with 413', async () => {
    const body = (size: number): string => `{"a":"${'x'.repeat(size - 8)}"}`
    const headers = { 'content-type': 'application/json' }
    const exact = await send('POST', '/demo/echo', { headers, body: body(1024 * 1024) })
    expect(exact.status).toBe(200)
    const over = await send('POST', '/demo/echo', { headers, body: body(1024 * 1024 + 1) })
    expect(over.status).toBe(413)
  })

  it('answers multipart without a boundary or without its closing boundary with 400, and keeps serving', async () => {
    const missing = await send('POST', '/demo/echo', {
      headers: { 'content-type': 'multipart/form-data' },
      body: 'xx',
    })
    expect(missing.status).toBe(400)
    const unclosed = await send('POST', '/demo/echo', {
      headers: { 'content-type': 'multipart/form-data; boundary=zz' },
      body: '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n',
    })
    expect(unclosed.status).toBe(400)
    expect((await get('/demo/int/1')).status).toBe(200)
  })
})

describe('conformance: method override', () => {
  it('is honoured on POST only, case-insensitively, and never to GET, HEAD, CONNECT or TRACE', async () => {
    const override = async (method: string, value: string): Promise<string> =>
      (await send(method, '/demo/echo', { headers: { 'x-http-method-override': value } })).json()
        .method
    expect(await override('POST', 'delete')).toBe('DELETE')
    expect(await override('POST', 'Put')).toBe('PUT')
    for (const refused of ['GET', 'head', 'CONNECT', 'trace'])
      expect(await override('POST', refused)).toBe('POST')
    expect(await override('PUT', 'DELETE')).toBe('PUT')
    expect(await override('DELETE', 'PATCH')).toBe('DELETE')
  })
})

describe('conformance: signed URLs', () => {
  it('verifies in the decided order: missing _sig 400, malformed _exp 400, bad signature 403, expired 410', async () => {
    const past = Math.floor(Date.now() / 1000) - 10
    const future = past + 600
    expect((await get(`/demo/signed/9?_exp=${past}`)).status).toBe(400)
    expect((await get(`/demo/signed/9?_exp=soon&_sig=${sign('/demo/signed/9')}`)).status).toBe(400)
    // Expired and wrongly signed: the signature is checked first.
    expect((await get(`/demo/signed/9?_exp=${past}&_sig=${'0'.repeat(64)}`)).status).toBe(403)
    const expired = await get(
      `/demo/signed/9?_exp=${past}&_sig=${sign(`/demo/signed/9?_exp=${past}`)}`,
    )
    expect(expired.status).toBe(410)
    expect(expired.headers['cache-control']).toBe('no-store')
    const valid = await get(
      `/demo/signed/9?_exp=${future}&_sig=${sign(`/demo/signed/9?_exp=${future}`)}`,
    )
    expect([valid.status, valid.json()]).toEqual([200, { id: 9, signed: true }])
    // Without _exp a signed URL does not expire.
    expect((await get(`/demo/signed/9?_sig=${sign('/demo/signed/9')}`)).status).toBe(200)
  })
})

describe('conformance: throttle headers', () => {
  it('sends X-RateLimit-Reset as Unix seconds, RateLimit-Reset and Retry-After as seconds from now', async () => {
    // A fresh client per run: with REDIS_URL set, counters outlive the server.
    const client = { 'x-forwarded-for': `2001:db8:${randomBytes(2).toString('hex')}::1` }
    const before = Math.floor(Date.now() / 1000)
    let last: Answer | undefined
    for (let i = 0; i < 6; i += 1) last = await get('/api/v1/limited', client)
    const after = Math.ceil(Date.now() / 1000)
    expect(last!.status).toBe(429)
    expect(last!.headers['x-ratelimit-limit']).toBe('5')
    expect(last!.headers['x-ratelimit-remaining']).toBe('0')
    const reset = Number(last!.headers['x-ratelimit-reset'])
    expect(reset).toBeGreaterThanOrEqual(before + 59)
    expect(reset).toBeLessThanOrEqual(after + 61)
    const retryAfter = Number(last!.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(last!.headers['ratelimit-reset']).toBe(String(retryAfter))
    expect(last!.json()).toMatchObject({ error: 'Too Many Requests', code: 429 })
  })
})
