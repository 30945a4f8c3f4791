/**
 * The kernel's `cors` option over real HTTP: a browser app on another origin gets
 * Access-Control-Allow-Origin on every answer, errors and routing misses included (a browser
 * hides an answer without it from the app), and its preflight is answered before any guard;
 * an origin not allowed gets no CORS header, and no error status either.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { internalError } from '../../../src/runtime/http-error.js'
import type { KernelOptions } from '../../../src/runtime/kernel.js'
import { FwResponse, json } from '../../../src/runtime/response.js'
import { createThrottle } from '../../../src/throttle/middleware.js'
import { MemoryStore } from '../../../src/throttle/memory-store.js'
import { bootKernel, cleanupTempDirs, serve, type Register, type Served } from './support.js'

const APP = 'https://app.example.com'
const EVIL = 'https://evil.example'

const routes: Register = (r) => {
  r.get('/api/users', () => json([{ id: 1 }], 200, { 'x-total': '1' }))
  r.post('/api/users', () => json({ id: 2 }, 201))
  r.delete('/api/users/{id:int}', () => json({ deleted: true }))
  r.get('/api/me', () => 'me', { middleware: ['auth'] })
  r.get('/api/limited', () => 'ok', { middleware: ['throttle:1,60'] })
  r.get('/api/crash', () => {
    throw new Error('boom')
  })
  r.get('/api/http-error', () => {
    throw internalError('Down for a moment')
  })
  // A body that fails before its first byte: the adapter asks the boundary for the 500 then.
  r.get(
    '/api/stream-fails',
    () =>
      new FwResponse(
        200,
        {},
        new Readable({
          read() {
            setImmediate(() => this.destroy(new Error('the file cannot be read')))
          },
        }),
      ),
  )
  r.get('/api/varied', () => json({ ok: true }, 200, { vary: 'Accept' }))
  r.get('/api/varied-origin', () => json({ ok: true }, 200, { vary: 'accept, origin' }))
  r.options('/api/explicit', () => json({ explicit: true }))
  r.get('/api/explicit', () => 'explicit')
  r.get('/web/page', () => 'page')
}

const servers: Served[] = []
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await cleanupTempDirs()
})

async function serveWith(cors: KernelOptions['cors'], options: Partial<KernelOptions> = {}) {
  const throttle = createThrottle({ store: new MemoryStore() })
  const server = await serve(
    await bootKernel(routes, { cors, middleware: { throttle }, ...options }),
  )
  servers.push(server)
  return server
}

const CORS_NAMES = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
]
const corsHeaders = (headers: Record<string, unknown>): string[] =>
  Object.keys(headers).filter((name) => CORS_NAMES.includes(name))

describe('an app with cors for its API (a list of origins, credentials, /api/* only)', () => {
  let app: Served
  beforeAll(async () => {
    app = await serveWith({
      origin: [APP, 'HTTPS://Admin.Example.com:443'],
      credentials: true,
      exposedHeaders: ['X-Total', 'X-Request-Id'],
      maxAge: 600,
      paths: ['/api/*'],
    })
  })

  it('answers a preflight and then the actual request, as a browser makes them', async () => {
    const preflight = await app.send('OPTIONS', '/api/users/7', {
      headers: {
        origin: APP,
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'authorization,content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.text).toBe('')
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      // The path's methods, as its 405 would list them.
      'access-control-allow-methods': 'DELETE',
      'access-control-allow-headers': 'authorization,content-type',
      'access-control-max-age': '600',
      vary: 'Origin, Access-Control-Request-Headers',
    })
    const actual = await app.send('DELETE', '/api/users/7', { headers: { origin: APP } })
    expect(actual.status).toBe(200)
    expect(actual.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'X-Total, X-Request-Id',
      vary: 'Origin',
    })
    // Preflight-only headers stay off actual responses.
    expect(actual.headers['access-control-max-age']).toBeUndefined()
    expect(actual.headers['access-control-allow-methods']).toBeUndefined()
  })

  it('lists every method of the path in a preflight, HEAD with GET', async () => {
    const preflight = await app.send('OPTIONS', '/api/users', {
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, POST')
    // Nothing asked, nothing reflected.
    expect(preflight.headers['access-control-allow-headers']).toBeUndefined()
  })

  it('answers the preflight of a path with an OPTIONS route itself (a preflight is no OPTIONS call)', async () => {
    const preflight = await app.send('OPTIONS', '/api/explicit', {
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS')
    // A plain OPTIONS request still reaches the route, with the headers of its origin.
    const plain = await app.send('OPTIONS', '/api/explicit', { headers: { origin: APP } })
    expect(plain.status).toBe(200)
    expect(JSON.parse(plain.text)).toEqual({ explicit: true })
    expect(plain.headers['access-control-allow-origin']).toBe(APP)
  })

  it('answers the preflight of a path no route has with the 404, which still names the origin', async () => {
    const preflight = await app.send('OPTIONS', '/api/nothing', {
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    })
    expect(preflight.status).toBe(404)
    expect(preflight.headers['access-control-allow-origin']).toBe(APP)
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined()
  })

  it('gives error answers the headers too: 401, 429, 404, 405, 500, a thrown HttpError', async () => {
    await app.send('GET', '/api/limited', { headers: { origin: APP } })
    const cases: [string, string, number][] = [
      ['GET', '/api/me', 401],
      ['GET', '/api/limited', 429],
      ['GET', '/api/nothing', 404],
      ['PUT', '/api/users', 405],
      ['GET', '/api/crash', 500],
      ['GET', '/api/http-error', 500],
      ['GET', '/api/stream-fails', 500],
    ]
    for (const [method, path, status] of cases) {
      const reply = await app.send(method, path, { headers: { origin: APP } })
      expect([path, reply.status]).toEqual([path, status])
      expect(reply.headers).toMatchObject({
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'X-Total, X-Request-Id',
      })
      expect(reply.headers.vary).toMatch(/(^|, )Origin$/)
    }
    // The error's own headers are kept beside them.
    const unauthorized = await app.send('GET', '/api/me', { headers: { origin: APP } })
    expect(unauthorized.headers['www-authenticate']).toBe('Bearer')
    const limited = await app.send('GET', '/api/limited', { headers: { origin: APP } })
    expect(limited.headers['retry-after']).toBeDefined()
  })

  it('answers a preflight before the guards: a preflight carries no credentials', async () => {
    const preflight = await app.send('OPTIONS', '/api/me', {
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe(APP)
  })

  it('compares origins exactly, scheme and host case aside, and answers with the serialization', async () => {
    const admin = await app.send('GET', '/api/users', {
      headers: { origin: 'https://admin.example.com' },
    })
    expect(admin.headers['access-control-allow-origin']).toBe('https://admin.example.com')
    const upper = await app.send('GET', '/api/users', {
      headers: { origin: 'HTTPS://APP.example.COM' },
    })
    expect(upper.headers['access-control-allow-origin']).toBe(APP)
    for (const origin of [
      `${APP}.evil.example`,
      `${APP}:8443`,
      'http://app.example.com',
      `${APP}/`,
      'https://example.com',
      `${APP}, ${EVIL}`,
      'null',
      EVIL,
    ]) {
      const reply = await app.send('GET', '/api/users', { headers: { origin } })
      expect([origin, reply.status, corsHeaders(reply.headers)]).toEqual([origin, 200, []])
      expect(reply.headers.vary).toBe('Origin')
    }
  })

  it('gives a disallowed origin no CORS headers and no error: its preflight is the plain OPTIONS', async () => {
    const preflight = await app.send('OPTIONS', '/api/users', {
      headers: { origin: EVIL, 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expect(corsHeaders(preflight.headers)).toEqual([])
  })

  it('says Vary: Origin to requests without an Origin too, so a shared cache keeps them apart', async () => {
    const reply = await app.send('GET', '/api/users')
    expect(reply.status).toBe(200)
    expect(corsHeaders(reply.headers)).toEqual([])
    expect(reply.headers.vary).toBe('Origin')
  })

  it('merges Origin into the Vary a response has, never twice', async () => {
    const varied = await app.send('GET', '/api/varied', { headers: { origin: APP } })
    expect(varied.headers.vary).toBe('Accept, Origin')
    const already = await app.send('GET', '/api/varied-origin', { headers: { origin: APP } })
    expect(already.headers.vary).toBe('accept, origin')
  })

  it('leaves paths outside `paths` as they were', async () => {
    const page = await app.send('GET', '/web/page', { headers: { origin: APP } })
    expect(page.status).toBe(200)
    expect(corsHeaders(page.headers)).toEqual([])
    expect(page.headers.vary).toBeUndefined()
    const preflight = await app.send('OPTIONS', '/web/page', {
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    })
    expect(preflight.headers.allow).toBe('GET, HEAD, OPTIONS')
    expect(corsHeaders(preflight.headers)).toEqual([])
  })
})

describe("the 'null' origin (sandboxed frames, file: pages)", () => {
  it('is allowed only when listed', async () => {
    const api = await serveWith({ origin: ['null'] })
    const reply = await api.send('GET', '/api/users', { headers: { origin: 'null' } })
    expect(reply.headers['access-control-allow-origin']).toBe('null')
    const other = await api.send('GET', '/api/users', { headers: { origin: APP } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe("an API open to any origin (origin: '*')", () => {
  let api: Served
  beforeAll(async () => {
    api = await serveWith({ origin: '*', allowedHeaders: ['Content-Type'] })
  })

  it('answers * to every origin, without Vary: the answer is the same for all', async () => {
    const sent: Record<string, string>[] = [{ origin: EVIL }, { origin: 'null' }, {}]
    for (const headers of sent) {
      const reply = await api.send('GET', '/web/page', { headers })
      expect(reply.headers['access-control-allow-origin']).toBe('*')
      expect(reply.headers['access-control-allow-credentials']).toBeUndefined()
      expect(reply.headers.vary).toBeUndefined()
    }
  })

  it('answers preflights with the configured headers, not those asked', async () => {
    const preflight = await api.send('OPTIONS', '/api/users', {
      headers: {
        origin: EVIL,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-secret',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'Content-Type',
      'access-control-allow-methods': 'GET, HEAD, POST',
    })
    expect(preflight.headers.vary).toBeUndefined()
  })
})

describe("an OPTIONS request without an Origin, to an API open to any origin ('*')", () => {
  it('is no preflight (Fetch: a preflight has an Origin): the plain OPTIONS answers it', async () => {
    const api = await serveWith({ origin: '*' })
    const reply = await api.send('OPTIONS', '/api/users', {
      headers: { 'access-control-request-method': 'POST' },
    })
    expect(reply.status).toBe(204)
    expect(reply.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expect(reply.headers['access-control-allow-methods']).toBeUndefined()
  })
})

describe('origins decided by a RegExp or a function', () => {
  it('tests a RegExp on the Origin as sent (a g flag does not make it alternate)', async () => {
    const api = await serveWith({ origin: /^https:\/\/[a-z]+\.example\.com$/g })
    for (let i = 0; i < 3; i++) {
      const reply = await api.send('GET', '/api/users', { headers: { origin: APP } })
      expect(reply.headers['access-control-allow-origin']).toBe(APP)
    }
    const other = await api.send('GET', '/api/users', { headers: { origin: EVIL } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('asks a function with the origin and the request; only true allows', async () => {
    const asked: string[] = []
    const api = await serveWith({
      origin: (origin, request) => {
        asked.push(`${origin} ${request.getPath()}`)
        return origin === APP
      },
    })
    const allowed = await api.send('GET', '/api/users', { headers: { origin: APP } })
    expect(allowed.headers['access-control-allow-origin']).toBe(APP)
    const refused = await api.send('GET', '/api/users', { headers: { origin: EVIL } })
    expect(refused.headers['access-control-allow-origin']).toBeUndefined()
    await api.send('GET', '/api/users')
    expect(asked).toEqual([`${APP} /api/users`, `${EVIL} /api/users`])
  })

  it('answers 500, allowing nothing, when the function answers a promise (truthy, but no answer)', async () => {
    const api = await serveWith({ origin: (async () => false) as never })
    const reply = await api.send('GET', '/api/users', { headers: { origin: EVIL } })
    expect(reply.status).toBe(500)
    expect(reply.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('a cors option that would not work, refused at boot', () => {
  it.each([
    [{ origin: '*', credentials: true }, "cors.origin '*' cannot go with credentials: true"],
    [{ origin: `${APP}/` }, `cors.origin "${APP}/" is not an origin: it ends with a slash`],
    [{ origin: [`${APP}/api`] }, `cors.origin "${APP}/api" is not an origin: it has a path`],
    [
      { origin: 'app.example.com' },
      'cors.origin "app.example.com" is not an origin: it has no scheme',
    ],
    [{ origin: 'https://*.example.com' }, 'is not an origin: a wildcard is no pattern here'],
    [{ origin: [APP, '*'] }, "cors.origin lists '*': it stands alone"],
    [{ origin: [] }, 'cors.origin must be'],
    [{}, 'cors.origin must be'],
    [{ origin: APP, credentials: 'true' }, 'cors.credentials must be true or false, not "true"'],
    [{ origin: APP, maxAge: -1 }, 'cors.maxAge must be a whole number of seconds'],
    [{ origin: APP, methods: 'GET,POST' }, 'cors.methods must be a list of names'],
    [{ origin: APP, credentials: true, allowedHeaders: ['*'] }, "cors.allowedHeaders lists '*'"],
    [{ origin: APP, paths: ['api/*'] }, 'cors.paths must be a list of paths'],
    [{ origin: APP, paths: ['/api/*/x'] }, 'cors.paths must be a list of paths'],
    [{ origin: APP, orgins: [APP] }, 'Kernel.boot() cors: unknown option `orgins`'],
    ['https://app.example.com', 'cors must be an object'],
  ])('refuses %j', async (cors, message) => {
    await expect(bootKernel(routes, { cors: cors as never })).rejects.toMatchObject({
      code: 'FW_SERVE_CONFIG',
      message: expect.stringContaining(message),
    })
  })
})
