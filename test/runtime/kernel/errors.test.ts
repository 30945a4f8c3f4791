/**
 * The error boundary (spec Errors, rules 1–5, and DESIGN "Behaviour the specification leaves
 * open"): routing misses, typed HttpErrors from middleware and handlers, hidden 5xx details,
 * unhandled errors, debug mode, responses left alone, negotiated formats, the safety headers and a
 * replaceable renderer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ErrorRenderer } from '../../../src/runtime/error-boundary.js'
import { forbidden, HttpError, serviceUnavailable } from '../../../src/runtime/http-error.js'
import type { Kernel } from '../../../src/runtime/kernel.js'
import { create, json, redirect, view } from '../../../src/runtime/response.js'
import { TemplateViews } from '../../../src/runtime/views.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { rawExchange } from '../../support/raw-http.js'
import {
  bootKernel,
  call,
  captureLogger,
  cleanupTempDirs,
  jsonOf,
  serve,
  textOf,
  type Register,
} from './support.js'

afterAll(cleanupTempDirs)

const adminsOnly: Middleware = () => {
  throw forbidden('Admins only', { headers: { 'x-reason': 'role' } })
}

const routes: Register = (r) => {
  r.get('/items', () => ['a'])
  r.post('/items', () => ({ created: true }))
  r.delete('/items/{id:int}', () => undefined)
  r.get('/typed/{code:int}', (_request: unknown, code: number) => {
    throw new HttpError(code, { message: 'Custom public message', headers: { 'x-extra': 'yes' } })
  })
  r.get('/admin', () => 'secret', { middleware: [adminsOnly] })
  r.get('/basic-only', () => {
    throw new HttpError(401, { headers: { 'WWW-Authenticate': 'Basic realm="files"' } })
  })
  r.get('/unavailable', () => {
    throw serviceUnavailable('database password rejected for user root', {
      headers: { 'retry-after': '30' },
    })
  })
  r.get('/crash', () => {
    throw new Error('secret detail at /srv/app.ts')
  })
  r.get('/crash-async', async () => {
    await Promise.resolve()
    throw new TypeError('async secret')
  })
  r.get('/throws-string', () => {
    throw 'a bare string'
  })
  r.get('/own-422', () => json({ error: 'Validation failed', fields: ['email'] }, 422))
  r.get('/own-404', () => create('gone fishing', 404))
  r.get('/moved', () => redirect('/items', 301))
  r.get('/conditional', () => create('', 304))
  r.get('/partial', () =>
    create('abc', 206, { 'content-range': 'bytes 0-2/10', 'content-type': 'text/plain' }),
  )
}

let kernel: Kernel
let log: ReturnType<typeof captureLogger>

beforeAll(async () => {
  log = captureLogger()
  kernel = await bootKernel(routes, { log })
})

describe('routing misses', () => {
  it('answers an unknown path with 404 and the default JSON body', async () => {
    const response = await call(kernel, { uri: '/nowhere', headers: { 'x-request-id': 'miss-1' } })
    expect(response.status).toBe(404)
    expect(await jsonOf(response)).toEqual({ error: 'Not Found', code: 404, request_id: 'miss-1' })
  })

  it('answers a known path with another method with 405 and Allow listing its methods (HEAD where GET exists)', async () => {
    const response = await call(kernel, { method: 'PUT', uri: '/items' })
    expect(response.status).toBe(405)
    expect(response.header('allow')).toBe('GET, HEAD, POST')
    expect(await jsonOf(response)).toMatchObject({ error: 'Method Not Allowed', code: 405 })
  })

  it('answers OPTIONS * (about the server, not a resource) with 204 and every method in use, over HTTP', async () => {
    const server = await serve(kernel)
    try {
      const reply = await rawExchange(server.port, [
        'OPTIONS * HTTP/1.1',
        'Host: localhost',
        'Connection: close',
      ])
      expect(reply).toMatch(/^HTTP\/1\.1 204 No Content\r\n/)
      expect(reply).toMatch(/\r\nallow: GET, HEAD, POST, DELETE, OPTIONS\r\n/i)
      // Any other method on * is a miss.
      expect(
        await rawExchange(server.port, ['GET * HTTP/1.1', 'Host: localhost', 'Connection: close']),
      ).toMatch(/^HTTP\/1\.1 404 /)
    } finally {
      await server.close()
    }
  })

  it('answers OPTIONS without an OPTIONS route with 204 and Allow including OPTIONS', async () => {
    const response = await call(kernel, { method: 'OPTIONS', uri: '/items/3' })
    expect(response.status).toBe(204)
    expect(response.header('allow')).toBe('DELETE, OPTIONS')
    expect(response.body).toBeNull()
  })

  it('still puts the request id header on a 404 (outer middleware see the error response)', async () => {
    const response = await call(kernel, '/nowhere')
    const id = response.header('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect((await jsonOf(response)).request_id).toBe(id)
  })
})

describe('typed HTTP errors', () => {
  it('renders an HttpError thrown by a handler with its status, public message and headers', async () => {
    const response = await call(kernel, '/typed/409')
    expect(response.status).toBe(409)
    expect(response.header('x-extra')).toBe('yes')
    expect(await jsonOf(response)).toMatchObject({ error: 'Custom public message', code: 409 })
  })

  it('answers every 401 with a WWW-Authenticate challenge: Bearer unless the error names its own', async () => {
    const bearer = await call(kernel, '/typed/401')
    expect(bearer.status).toBe(401)
    expect(bearer.header('www-authenticate')).toBe('Bearer')
    const basic = await call(kernel, '/basic-only')
    expect(basic.status).toBe(401)
    expect(basic.header('www-authenticate')).toBe('Basic realm="files"')
    expect((await call(kernel, '/typed/403')).header('www-authenticate')).toBeUndefined()
  })

  it('renders an HttpError thrown by middleware before the handler runs', async () => {
    const response = await call(kernel, '/admin')
    expect(response.status).toBe(403)
    expect(response.header('x-reason')).toBe('role')
    expect(await jsonOf(response)).toMatchObject({ error: 'Admins only', code: 403 })
  })

  it('hides the message of a 5xx HttpError, keeps its headers, and logs it', async () => {
    log.lines.length = 0
    const response = await call(kernel, '/unavailable')
    expect(response.status).toBe(503)
    expect(response.header('retry-after')).toBe('30')
    const text = await textOf(response)
    expect(JSON.parse(text)).toMatchObject({ error: 'Service Unavailable', code: 503 })
    expect(text).not.toContain('password')
    const logged = log.lines.find((l) => l.level === 'error')
    expect(logged?.msg).toContain('database password rejected')
  })

  it('does not log 4xx HttpErrors as errors', async () => {
    log.lines.length = 0
    await call(kernel, '/typed/404')
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([])
  })

  it('shows an exposed 5xx message when the error says it may be shown', async () => {
    const exposed = await bootKernel((r) =>
      r.get('/', () => {
        throw new HttpError(503, { message: 'Back at noon', expose: true })
      }),
    )
    expect(await jsonOf(await call(exposed, '/'))).toMatchObject({
      error: 'Back at noon',
      code: 503,
    })
  })

  it('merges the extra body fields an HttpError carries', async () => {
    const extra = await bootKernel((r) =>
      r.get('/', () => {
        throw new HttpError(400, {
          message: 'bad grant',
          body: { error_description: 'password mismatch' },
        })
      }),
    )
    expect(await jsonOf(await call(extra, '/'))).toMatchObject({
      error: 'bad grant',
      error_description: 'password mismatch',
      code: 400,
    })
  })
})

describe('unhandled errors', () => {
  it('answers a thrown Error with exactly the generic 500 body and logs the error itself', async () => {
    log.lines.length = 0
    const response = await call(kernel, { uri: '/crash', headers: { 'x-request-id': 'crash-1' } })
    expect(response.status).toBe(500)
    const text = await textOf(response)
    expect(JSON.parse(text)).toEqual({
      error: 'Internal Server Error',
      code: 500,
      request_id: 'crash-1',
    })
    expect(text).not.toMatch(/secret|stack|app\.ts/)
    const logged = log.lines.find((l) => l.level === 'error')
    expect((logged?.obj as { err?: unknown }).err).toBeInstanceOf(Error)
    expect((logged?.obj as { err: Error }).err.message).toBe('secret detail at /srv/app.ts')
    expect(logged?.obj).toMatchObject({ path: '/crash', request_id: 'crash-1' })
  })

  it('treats an async rejection and a thrown non-Error the same way', async () => {
    for (const path of ['/crash-async', '/throws-string']) {
      const response = await call(kernel, path)
      expect(response.status).toBe(500)
      expect(await jsonOf(response)).toMatchObject({ error: 'Internal Server Error', code: 500 })
    }
  })

  it('shows the message and stack with debug on outside production', async () => {
    const debugging = await bootKernel(routes, { debug: true, env: 'development' })
    const body = await jsonOf(await call(debugging, '/crash'))
    expect(body).toMatchObject({ error: 'Internal Server Error', code: 500 })
    expect(body.debug.message).toBe('secret detail at /srv/app.ts')
    expect(body.debug.stack).toContain('secret detail')
  })

  it('never shows details in production, even with debug on', async () => {
    const production = await bootKernel(routes, { debug: true, env: 'production', builtins: false })
    const response = await call(production, '/crash')
    const text = await textOf(response)
    expect(response.status).toBe(500)
    expect(JSON.parse(text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
    expect(JSON.parse(text)).not.toHaveProperty('debug')
    expect(text).not.toMatch(/secret|stack/)
  })

  it('leaves request_id out of the body when the request has no id (builtins off)', async () => {
    const bare = await bootKernel(routes, { builtins: false })
    expect(await jsonOf(await call(bare, '/crash'))).toEqual({
      error: 'Internal Server Error',
      code: 500,
    })
    const problem = await jsonOf(
      await call(bare, { uri: '/nowhere', headers: { accept: 'application/problem+json' } }),
    )
    expect(problem).not.toHaveProperty('request_id')
  })

  it('shows nothing extra with debug off (the default)', async () => {
    expect(await jsonOf(await call(kernel, '/crash'))).not.toHaveProperty('debug')
  })
})

describe('responses the boundary leaves alone', () => {
  it("returns a handler's own 4xx response unchanged, without the error headers", async () => {
    const response = await call(kernel, '/own-422')
    expect(response.status).toBe(422)
    expect(await jsonOf(response)).toEqual({ error: 'Validation failed', fields: ['email'] })
    expect(response.header('cache-control')).toBeUndefined()
    expect(response.header('x-content-type-options')).toBeUndefined()
    const notFound = await call(kernel, '/own-404')
    expect(notFound.status).toBe(404)
    expect(await textOf(notFound)).toBe('gone fishing')
  })

  it('leaves redirects, 304 and 206 responses alone', async () => {
    const moved = await call(kernel, '/moved')
    expect(moved.status).toBe(301)
    expect(moved.header('location')).toBe('/items')
    expect(moved.header('cache-control')).toBeUndefined()
    expect((await call(kernel, '/conditional')).status).toBe(304)
    const partial = await call(kernel, '/partial')
    expect(partial.status).toBe(206)
    expect(partial.header('content-range')).toBe('bytes 0-2/10')
  })
})

describe('error formats and headers', () => {
  it('puts Cache-Control: no-store and X-Content-Type-Options: nosniff on every error response', async () => {
    for (const path of ['/nowhere', '/typed/418', '/admin', '/crash']) {
      const response = await call(kernel, path)
      expect(response.header('cache-control')).toBe('no-store')
      expect(response.header('x-content-type-options')).toBe('nosniff')
    }
  })

  it('answers JSON without Accept, for */*, for application/json, and for types it cannot produce', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'text/html', 'image/png']) {
      const response = await call(kernel, { uri: '/typed/409', headers: accept ? { accept } : {} })
      expect(response.header('content-type')).toBe('application/json; charset=utf-8')
      expect(await jsonOf(response)).toMatchObject({ error: 'Custom public message', code: 409 })
    }
  })

  it('answers application/problem+json (RFC 9457) when asked', async () => {
    const response = await call(kernel, {
      uri: '/typed/422',
      headers: { accept: 'application/problem+json', 'x-request-id': 'p-1' },
    })
    expect(response.header('content-type')).toBe('application/problem+json')
    expect(await jsonOf(response)).toEqual({
      type: 'about:blank',
      title: 'Unprocessable Entity',
      status: 422,
      detail: 'Custom public message',
      instance: '/typed/422',
      request_id: 'p-1',
    })
  })

  it('answers text/plain when asked', async () => {
    const response = await call(kernel, { uri: '/admin', headers: { accept: 'text/plain' } })
    expect(response.status).toBe(403)
    expect(response.header('content-type')).toBe('text/plain; charset=utf-8')
    expect(await textOf(response)).toBe('Admins only\n')
  })

  it('picks the format with the highest q-value', async () => {
    const cases: [string, string][] = [
      ['text/plain;q=0.5, application/problem+json;q=0.9', 'application/problem+json'],
      ['application/json;q=0.1, text/plain', 'text/plain; charset=utf-8'],
      ['application/problem+json;q=0.2, application/json;q=0.8', 'application/json; charset=utf-8'],
      ['text/html, text/plain;q=0.4', 'text/plain; charset=utf-8'],
      ['text/*', 'text/plain; charset=utf-8'],
      ['application/*', 'application/json; charset=utf-8'],
    ]
    for (const [accept, type] of cases) {
      const response = await call(kernel, { uri: '/nowhere', headers: { accept } })
      expect({ accept, type: response.header('content-type') }).toEqual({ accept, type })
    }
  })

  it('never picks a format the client refused with q=0', async () => {
    for (const accept of ['application/problem+json;q=0', 'text/plain;q=0']) {
      const response = await call(kernel, { uri: '/nowhere', headers: { accept } })
      expect({ accept, type: response.header('content-type') }).toEqual({
        accept,
        type: 'application/json; charset=utf-8',
      })
    }
  })
})

describe('a custom error renderer', () => {
  it('replaces the rendered body and receives the typed error and its context', async () => {
    const seen: unknown[] = []
    const errorRenderer: ErrorRenderer = (error, context) => {
      seen.push({
        status: error.status,
        message: error.publicMessage,
        path: context.path,
        requestId: context.requestId,
      })
      return json({ failure: error.publicMessage, status: error.status }, error.status, {
        'x-renderer': 'custom',
      })
    }
    const custom = await bootKernel(routes, { errorRenderer })
    const response = await call(custom, { uri: '/admin', headers: { 'x-request-id': 'r-9' } })
    expect(response.status).toBe(403)
    expect(response.header('x-renderer')).toBe('custom')
    expect(await jsonOf(response)).toEqual({ failure: 'Admins only', status: 403 })
    expect(seen).toEqual([
      { status: 403, message: 'Admins only', path: '/admin', requestId: 'r-9' },
    ])
    // Routing misses and unhandled errors go through it too.
    expect(await jsonOf(await call(custom, '/nowhere'))).toEqual({
      failure: 'Not Found',
      status: 404,
    })
    expect(await jsonOf(await call(custom, '/crash'))).toEqual({
      failure: 'Internal Server Error',
      status: 500,
    })
  })

  it('adds the headers its status needs and the error headers it left out, not over its own', async () => {
    const errorRenderer: ErrorRenderer = (error) =>
      error.status === 503
        ? json({ oops: 503 }, 503, { 'retry-after': '5', 'cache-control': 'max-age=1' })
        : json({ oops: error.status }, error.status)
    const custom = await bootKernel(routes, { errorRenderer })
    const notAllowed = await call(custom, { uri: '/items', method: 'PUT' })
    expect(notAllowed.status).toBe(405)
    expect(notAllowed.header('allow')).toBe('GET, HEAD, POST')
    expect(notAllowed.header('cache-control')).toBe('no-store')
    expect(notAllowed.header('x-content-type-options')).toBe('nosniff')
    const challenge = await call(custom, '/typed/401')
    expect(challenge.header('www-authenticate')).toBe('Bearer')
    expect(challenge.header('x-extra')).toBe('yes')
    const own = await call(custom, '/unavailable')
    expect([own.header('retry-after'), own.header('cache-control')]).toEqual(['5', 'max-age=1'])
    expect(await jsonOf(own)).toEqual({ oops: 503 })
  })

  it('renders an error page answered as a view, and falls back when the view fails', async () => {
    const views = new TemplateViews({
      templates: { 'errors/page': '<h1>{{ code }}: {{ m }}</h1>' },
    })
    const errorRenderer: ErrorRenderer = (error) =>
      view(
        error.status === 404 ? 'errors/page' : 'errors/missing',
        {
          code: error.status,
          m: error.publicMessage,
        },
        error.status,
      )
    const custom = await bootKernel(routes, { errorRenderer, views, log: captureLogger() })
    const page = await call(custom, '/nowhere')
    expect(page.status).toBe(404)
    expect(page.header('content-type')).toBe('text/html; charset=utf-8')
    expect(await textOf(page)).toBe('<h1>404: Not Found</h1>')
    // A view that does not exist: the default rendering, not an empty text/html answer.
    const fallback = await call(custom, '/typed/409')
    expect(fallback.status).toBe(409)
    expect(await jsonOf(fallback)).toMatchObject({ error: 'Custom public message', code: 409 })
  })

  it('falls back to the default rendering, and logs, when the custom renderer throws', async () => {
    const failing = captureLogger()
    const errorRenderer: ErrorRenderer = () => {
      throw new Error('renderer bug')
    }
    const custom = await bootKernel(routes, { errorRenderer, log: failing })
    const response = await call(custom, '/typed/409')
    expect(response.status).toBe(409)
    expect(response.header('cache-control')).toBe('no-store')
    expect(await jsonOf(response)).toMatchObject({ error: 'Custom public message', code: 409 })
    expect(
      failing.lines.some(
        (l) => l.level === 'error' && (l.obj as { err?: Error }).err?.message === 'renderer bug',
      ),
    ).toBe(true)
  })

  it('falls back as well when an async custom renderer rejects', async () => {
    const custom = await bootKernel(routes, {
      errorRenderer: async () => Promise.reject(new Error('later bug')),
    })
    const response = await call(custom, '/nowhere')
    expect(response.status).toBe(404)
    expect(await jsonOf(response)).toMatchObject({ error: 'Not Found', code: 404 })
  })

  it('falls back, and logs, when the custom renderer does not answer in time (the request used to hang)', async () => {
    const log = captureLogger()
    const custom = await bootKernel(routes, {
      errorRenderer: () => new Promise<never>(() => {}),
      errorRendererTimeoutMs: 50,
      log,
    })
    const response = await call(custom, '/nowhere')
    expect(response.status).toBe(404)
    expect(await jsonOf(response)).toMatchObject({ error: 'Not Found', code: 404 })
    const failure = log.lines.find((l) => l.level === 'error')
    expect((failure?.obj as { err?: Error } | undefined)?.err?.message).toBe(
      'The custom error renderer did not answer within 50 ms',
    )
  })

  it('falls back in time as well when the renderer answers a thenable that never settles', async () => {
    const log = captureLogger()
    const custom = await bootKernel(routes, {
      errorRenderer: (() => ({ then: () => {} })) as never,
      errorRendererTimeoutMs: 50,
      log,
    })
    const response = await call(custom, '/nowhere')
    expect(response.status).toBe(404)
    expect(await jsonOf(response)).toMatchObject({ error: 'Not Found', code: 404 })
    const failure = log.lines.find((l) => l.level === 'error')
    expect((failure?.obj as { err?: Error } | undefined)?.err?.message).toBe(
      'The custom error renderer did not answer within 50 ms',
    )
  })

  it('waits for a slow renderer that answers within its time', async () => {
    const custom = await bootKernel(routes, {
      errorRenderer: async (error) => {
        await new Promise((done) => setTimeout(done, 30))
        return json({ late: true }, error.status)
      },
      errorRendererTimeoutMs: 2000,
    })
    expect(await jsonOf(await call(custom, '/nowhere'))).toEqual({ late: true })
  })

  it.each([0, -1, Number.NaN, Infinity])(
    'refuses errorRendererTimeoutMs %s at boot',
    async (errorRendererTimeoutMs) => {
      await expect(bootKernel(routes, { errorRendererTimeoutMs })).rejects.toThrow(
        /errorRendererTimeoutMs must be a number of milliseconds above 0/,
      )
    },
  )
})
