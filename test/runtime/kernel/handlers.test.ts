/**
 * Handler invocation (spec route-definition rules 1 and 5): the request first, then the route
 * parameters in order (domain parameters first); class pairs, container strings and a custom
 * invoker; and how each kind of return value becomes a response, streams over real HTTP.
 */
import { createReadStream, existsSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import type { Invoker } from '../../../src/runtime/handlers.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import type { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'
import { FwResponse, noContent, redirect, stream } from '../../../src/runtime/response.js'
import { gone } from '../../../src/runtime/http-error.js'
import { rawExchange } from '../../support/raw-http.js'
import {
  bootKernel,
  call,
  captureLogger,
  cleanupTempDirs,
  jsonOf,
  serve,
  textOf,
} from './support.js'

afterAll(cleanupTempDirs)

describe('handler arguments', () => {
  it('passes the request first, then the route parameters in pattern order', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/users/{id:int}/posts/{slug}', (request: FwRequest, id: number, slug: string) => ({
        isRequest: request instanceof FwRequest,
        path: request.getPath(),
        id,
        slug,
      }))
    })
    expect(await jsonOf(await call(kernel, '/users/5/posts/hello'))).toEqual({
      isRequest: true,
      path: '/users/5/posts/hello',
      id: 5,
      slug: 'hello',
    })
  })

  it('passes domain parameters before path parameters', async () => {
    const kernel = await bootKernel((r) => {
      r.group({ domain: '{account}.example.com' }, (r) => {
        r.get('/projects/{id:int}', (_request: FwRequest, ...params: unknown[]) => ({ params }))
        r.get('/dashboard', (_request: FwRequest, ...params: unknown[]) => ({ params }))
      })
      r.get('/health', (_request: FwRequest, ...params: unknown[]) => ({ params }))
    })
    const response = await call(kernel, { uri: 'http://acme.example.com/projects/12' })
    expect(await jsonOf(response)).toEqual({ params: ['acme', 12] })
    // A static path still passes its domain parameter; a route without placeholders passes none.
    expect(await jsonOf(await call(kernel, { uri: 'http://acme.example.com/dashboard' }))).toEqual({
      params: ['acme'],
    })
    expect(await jsonOf(await call(kernel, { uri: 'http://other.test/health' }))).toEqual({
      params: [],
    })
  })

  it('refuses two Host lines with 400 on domain and plain routes, whatever else names the host (RFC 9112 3.2)', async () => {
    const kernel = await bootKernel((r) => {
      r.group({ domain: '{account}.localhost' }, (r) => {
        r.get('/whoami', (_request: FwRequest, account: string) => ({ account }))
      })
      r.get('/plain', () => ({ plain: true }))
    })
    const server = await serve(kernel)
    const exchange = async (lines: string[]) => {
      const reply = await rawExchange(server.port, [...lines, 'Connection: close'])
      return {
        status: Number(reply.slice(9, 12)),
        body: JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)),
      }
    }
    try {
      expect(await exchange(['GET /whoami HTTP/1.1', 'Host: acme.localhost'])).toEqual({
        status: 200,
        body: { account: 'acme' },
      })
      expect(
        await exchange(['GET http://acme.localhost/whoami HTTP/1.1', 'Host: acme.localhost']),
      ).toEqual({ status: 200, body: { account: 'acme' } })
      for (const target of [
        '/whoami',
        'http://acme.localhost/whoami',
        '/plain',
        'http://acme.localhost/plain',
      ]) {
        for (const second of ['acme.localhost', 'evil.localhost']) {
          const plainHosts = ['Host: acme.localhost', `Host: ${second}`]
          // Loopback is a trusted proxy by default: its X-Forwarded-Host must not hide the second line either.
          for (const extra of [[], ['X-Forwarded-Host: acme.localhost']]) {
            const reply = await exchange([`GET ${target} HTTP/1.1`, ...plainHosts, ...extra])
            expect({ target, second, extra, ...reply }).toMatchObject({
              target,
              second,
              extra,
              status: 400,
              body: { error: 'More than one Host header' },
            })
          }
        }
      }
    } finally {
      await server.close()
    }
  })

  it('gives the handler the request with its route name and body loaded', async () => {
    const kernel = await bootKernel((r) => {
      r.post(
        '/things',
        (request: FwRequest) => ({
          route: request.getAttribute('route.name'),
          loaded: request.isBodyLoaded(),
          name: request.input('name'),
        }),
        'things.store',
      )
    })
    const response = await call(kernel, {
      method: 'POST',
      uri: '/things',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"box"}',
    })
    expect(await jsonOf(response)).toEqual({ route: 'things.store', loaded: true, name: 'box' })
  })
})

describe('handler forms', () => {
  it('instantiates a [Class, method] handler once and reuses it across requests', async () => {
    let constructed = 0
    class Counter {
      count = 0
      constructor() {
        constructed++
      }
      hit(_request: FwRequest, id: number) {
        this.count++
        return { id, count: this.count }
      }
    }
    const kernel = await bootKernel((r) => r.get('/count/{id:int}', [Counter, 'hit']))
    expect(await jsonOf(await call(kernel, '/count/1'))).toEqual({ id: 1, count: 1 })
    expect(await jsonOf(await call(kernel, '/count/2'))).toEqual({ id: 2, count: 2 })
    expect(constructed).toBe(1)
  })

  it('shares one instance of a controller class between its routes (once per kernel)', async () => {
    let constructed = 0
    class Posts {
      seen: string[] = []
      constructor() {
        constructed++
      }
      index() {
        this.seen.push('index')
        return { seen: this.seen }
      }
      show() {
        this.seen.push('show')
        return { seen: this.seen }
      }
    }
    const kernel = await bootKernel((r) => {
      r.get('/posts', [Posts, 'index'])
      r.get('/posts/{id:int}', [Posts, 'show'])
    })
    await call(kernel, '/posts')
    expect(await jsonOf(await call(kernel, '/posts/1'))).toEqual({ seen: ['index', 'show'] })
    expect(constructed).toBe(1)
  })

  it('takes the instance of a [Class, method] handler from the container when it is bound by class name', async () => {
    class Greeter {
      constructor(readonly greeting: string) {}
      hello(_request: FwRequest, name: string) {
        return `${this.greeting}, ${name}`
      }
    }
    const container = new Container().set('Greeter', new Greeter('Bonjour'))
    const kernel = await bootKernel((r) => r.get('/hello/{name}', [Greeter, 'hello']), {
      container,
    })
    expect(await textOf(await call(kernel, '/hello/ada'))).toBe('Bonjour, ada')
  })

  it("resolves a 'Key@method' handler from the container, lazily and with `this` bound", async () => {
    let built = 0
    const container = new Container().singleton('users', () => {
      built++
      return {
        prefix: 'user-',
        show(this: { prefix: string }, _request: FwRequest, id: number) {
          return { id: `${this.prefix}${id}` }
        },
      }
    })
    const kernel = await bootKernel((r) => r.get('/users/{id:int}', 'users@show'), { container })
    expect(built).toBe(0)
    expect(await jsonOf(await call(kernel, '/users/3'))).toEqual({ id: 'user-3' })
    await call(kernel, '/users/4')
    expect(built).toBe(1)
  })

  it("warns at boot about a 'Key@method' handler whose key nothing is bound to (a typo answers 500)", async () => {
    const log = captureLogger()
    const container = new Container().set('users', { show: () => 'user' })
    await bootKernel(
      (r) => {
        r.get('/users/{id:int}', 'users@show', 'users.show')
        r.get('/typo', 'usres@index')
      },
      { container, log },
    )
    const warnings = log.lines.filter((line) => line.level === 'warn')
    expect(warnings).toEqual([
      expect.objectContaining({
        obj: { route: 'GET /typo', handler: 'usres@index' },
        msg: 'Nothing is bound to "usres" in the container: the route answers 500 until something is',
      }),
    ])
  })

  it("calls __invoke for a 'Key' handler without a method", async () => {
    const container = new Container().set('ping', { __invoke: () => 'pong' })
    const kernel = await bootKernel((r) => r.get('/ping', 'ping'), { container })
    expect(await textOf(await call(kernel, '/ping'))).toBe('pong')
  })

  it("answers 500 (and logs) when a 'Key@method' names a method the service lacks", async () => {
    const log = captureLogger()
    const container = new Container().set('users', {})
    const kernel = await bootKernel((r) => r.get('/users', 'users@index'), { container, log })
    const response = await call(kernel, '/users')
    expect(response.status).toBe(500)
    expect(await textOf(response)).not.toMatch(/users@index|no method/)
    expect(log.lines.some((l) => l.level === 'error')).toBe(true)
  })

  it('hands every handler to a custom invoker with the request and the parameters', async () => {
    const calls: unknown[] = []
    const invoker: Invoker = (handler, request, params) => {
      calls.push({ kind: typeof handler, path: request.getPath(), params })
      return { invoked: true, params }
    }
    const kernel = await bootKernel(
      (r) => {
        r.get('/a/{id:int}', () => 'never called')
        r.get('/b', 'svc@run')
      },
      { invoker },
    )
    expect(await jsonOf(await call(kernel, '/a/7'))).toEqual({ invoked: true, params: [7] })
    expect(await jsonOf(await call(kernel, '/b'))).toEqual({ invoked: true, params: [] })
    expect(calls).toEqual([
      { kind: 'function', path: '/a/7', params: [7] },
      { kind: 'string', path: '/b', params: [] },
    ])
  })
})

describe('return values', () => {
  const register = (r: any): void => {
    r.get('/response', () => new FwResponse(202, { 'X-Custom': 'kept' }, 'queued'))
    r.get('/object', () => ({ id: 1, tags: ['a'] }))
    r.get('/array', async () => [1, 2, 3])
    r.get('/string', () => 'hello')
    r.get('/undefined', () => undefined)
    r.get('/null', () => null)
    r.get('/bytes', () => new Uint8Array([0, 1, 2, 255]))
    r.get('/stream', () => Readable.from(['chunk-1;', 'chunk-2;', 'chunk-3']))
  }

  it('sends a returned FwResponse as it is', async () => {
    const kernel = await bootKernel(register)
    const response = await call(kernel, '/response')
    expect(response.status).toBe(202)
    expect(response.header('x-custom')).toBe('kept')
    expect(await textOf(response)).toBe('queued')
  })

  it('answers a plain object or array (also from an async handler) as JSON 200', async () => {
    const kernel = await bootKernel(register)
    const object = await call(kernel, '/object')
    expect(object.status).toBe(200)
    expect(object.header('content-type')).toBe('application/json; charset=utf-8')
    expect(await jsonOf(object)).toEqual({ id: 1, tags: ['a'] })
    expect(await jsonOf(await call(kernel, '/array'))).toEqual([1, 2, 3])
  })

  it('answers a string as text/plain 200', async () => {
    const kernel = await bootKernel(register)
    const response = await call(kernel, '/string')
    expect(response.status).toBe(200)
    expect(response.header('content-type')).toBe('text/plain; charset=utf-8')
    expect(await textOf(response)).toBe('hello')
  })

  it('answers undefined or null as 204 with no body', async () => {
    const kernel = await bootKernel(register)
    for (const path of ['/undefined', '/null']) {
      const response = await call(kernel, path)
      expect(response.status).toBe(204)
      expect(response.body).toBeNull()
    }
  })

  it('answers bytes as application/octet-stream', async () => {
    const kernel = await bootKernel(register)
    const response = await call(kernel, '/bytes')
    expect(response.status).toBe(200)
    expect(response.header('content-type')).toBe('application/octet-stream')
    expect([...(response.body as Uint8Array)]).toEqual([0, 1, 2, 255])
  })

  it('frames a response without a body with Content-Length: 0, a 204 with no length', async () => {
    const server = await serve(
      await bootKernel((r) => {
        r.get('/away', () => redirect('/there', 303), 'away')
        r.get('/nothing', () => noContent(), 'nothing')
      }),
    )
    try {
      const moved = await rawExchange(server.port, [
        'GET /away HTTP/1.1',
        'Host: x',
        'Connection: close',
      ])
      expect(moved).toMatch(/^HTTP\/1\.1 303 /)
      expect(moved).toMatch(/\r\ncontent-length: 0\r\n/i)
      expect(moved).not.toMatch(/transfer-encoding/i)
      const none = await rawExchange(server.port, [
        'GET /nothing HTTP/1.1',
        'Host: x',
        'Connection: close',
      ])
      expect(none).toMatch(/^HTTP\/1\.1 204 /)
      expect(none).not.toMatch(/content-length|transfer-encoding/i)
    } finally {
      await server.close()
    }
  })

  it('streams a Readable over HTTP with chunked encoding, and sends bytes with Content-Length', async () => {
    const server = await serve(await bootKernel(register))
    try {
      const streamed = await server.send('GET', '/stream')
      expect(streamed.status).toBe(200)
      expect(streamed.text).toBe('chunk-1;chunk-2;chunk-3')
      expect(streamed.headers['transfer-encoding']).toBe('chunked')
      expect(streamed.headers['content-length']).toBeUndefined()
      const bytes = await server.send('GET', '/bytes')
      expect(bytes.headers['content-length']).toBe('4')
      expect(bytes.headers['content-type']).toBe('application/octet-stream')
    } finally {
      await server.close()
    }
  })

  it('answers HEAD on a streaming route with headers and no body, and keeps serving', async () => {
    const server = await serve(await bootKernel(register))
    try {
      const head = await server.send('HEAD', '/stream')
      expect(head.status).toBe(200)
      expect(head.text).toBe('')
      expect(head.headers['content-type']).toBe('application/octet-stream')
      expect((await server.send('GET', '/string')).text).toBe('hello')
    } finally {
      await server.close()
    }
  })

  it('keeps serving after a streamed body fails midway, and logs the failure', async () => {
    const log = captureLogger()
    const failing = (): Readable =>
      new Readable({
        read() {
          this.push('partial')
          this.destroy(new Error('disk gone'))
        },
      })
    const server = await serve(
      await bootKernel(
        (r) => {
          r.get('/broken', failing)
          r.get('/ok', () => 'fine')
        },
        { log },
      ),
    )
    try {
      await server.send('GET', '/broken').catch(() => null)
      expect((await server.send('GET', '/ok')).text).toBe('fine')
      await vi.waitFor(() => expect(log.lines.some((l) => l.level === 'warn')).toBe(true))
    } finally {
      await server.close()
    }
  })
})

describe('streamed bodies that fail or are abandoned', () => {
  const failingBeforeFirstChunk = (error: Error): Readable =>
    new Readable({
      read() {
        this.destroy(error)
      },
    })

  it('answers a file that cannot be opened through the error boundary: 500 JSON, not a cut 200', async () => {
    const log = captureLogger()
    const server = await serve(
      await bootKernel(
        (r) => {
          r.get('/missing', () =>
            createReadStream(join(tmpdir(), `fw-no-such-file-${process.pid}`)),
          )
          r.get('/ok', () => 'fine')
        },
        { log },
      ),
    )
    try {
      const reply = await server.send('GET', '/missing')
      expect(reply.status).toBe(500)
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(JSON.parse(reply.text)).toMatchObject({ error: 'Internal Server Error' })
      expect(reply.text).not.toContain('ENOENT')
      expect(reply.headers['content-disposition']).toBeUndefined()
      expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      expect(log.lines.some((l) => l.level === 'error')).toBe(true)
      expect((await server.send('GET', '/ok')).text).toBe('fine')
    } finally {
      await server.close()
    }
  })

  it('answers an HTTP error raised by a stream before its first chunk with that status', async () => {
    const server = await serve(
      await bootKernel((r) => {
        r.get('/gone', () =>
          stream(failingBeforeFirstChunk(gone('The export expired')), 200, { 'x-export': '1' }),
        )
      }),
    )
    try {
      const reply = await server.send('GET', '/gone')
      expect(reply.status).toBe(410)
      expect(JSON.parse(reply.text)).toMatchObject({ error: 'The export expired' })
      expect(reply.headers['x-export']).toBeUndefined()
    } finally {
      await server.close()
    }
  })

  it('sends every header of a streamed response, a repeated one as separate lines', async () => {
    const server = await serve(
      await bootKernel((r) => {
        r.get('/cookies', () =>
          stream(Readable.from(['body']), 200, { 'content-type': 'text/plain' })
            .withHeader('set-cookie', 'a=1')
            .withHeader('x-one', 'yes'),
        )
      }),
    )
    try {
      const reply = await server.send('GET', '/cookies')
      expect(reply.status).toBe(200)
      expect(reply.text).toBe('body')
      expect(reply.headers['content-type']).toBe('text/plain')
      expect(reply.headers['set-cookie']).toEqual(['a=1'])
      expect(reply.headers['x-one']).toBe('yes')
      expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    } finally {
      await server.close()
    }
  })

  it('stops reading a streamed body when the client goes away', async () => {
    let destroyed = false
    const endless = new Readable({
      read() {
        setTimeout(() => this.push('tick\n'), 5)
      },
      destroy(error, callback) {
        destroyed = true
        callback(error)
      },
    })
    const server = await serve(
      await bootKernel((r) => {
        r.get('/endless', () => stream(endless))
      }),
    )
    try {
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: server.port, path: '/endless', agent: false },
          (res) => {
            res.once('data', () => {
              req.destroy()
              resolve()
            })
          },
        )
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)))
        req.end()
      })
      await vi.waitFor(() => expect(destroyed).toBe(true))
    } finally {
      await server.close()
    }
  })
})

describe('uploads over HTTP', () => {
  it('removes an uploaded temp file the handler did not move once the response is sent', async () => {
    let uploadedPath: string | null = null
    let existedDuringHandler = false
    const server = await serve(
      await bootKernel((r) => {
        r.post('/upload', (request: FwRequest) => {
          const file = request.file('doc') as UploadedFile
          uploadedPath = file.getPath()
          existedDuringHandler = uploadedPath !== null && existsSync(uploadedPath)
          return { size: file.getSize() }
        })
      }),
    )
    try {
      const boundary = 'kernelboundary7'
      const body = [
        `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabcdef\r\n`,
        `--${boundary}--\r\n`,
      ].join('')
      const reply = await server.send('POST', '/upload', {
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual({ size: 6 })
      expect(existedDuringHandler).toBe(true)
      await vi.waitFor(() => expect(existsSync(uploadedPath!)).toBe(false))
    } finally {
      await server.close()
    }
  })
})
