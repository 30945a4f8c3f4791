/**
 * The runtime's public API as a library user meets it (audit 2): response helpers, streamed
 * bodies, typed errors, file(), view engines and the kernel's boot inputs. Each case is named
 * after what broke, and answered over real HTTP where the wire shows it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { FwError } from '../../src/shared/errors.js'
import { file } from '../../src/runtime/file.js'
import { badRequest, HttpError, methodNotAllowed, notFound } from '../../src/runtime/http-error.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import {
  create,
  json,
  redirect,
  stream,
  view,
  type RedirectStatus,
} from '../../src/runtime/response.js'
import { rawExchange } from '../support/raw-http.js'
import {
  bootKernel,
  captureLogger,
  cleanupTempDirs,
  serve,
  type Register,
} from './kernel/support.js'
import { exchange, head, serveWire, splitAnswers } from './kernel/wire.js'

afterAll(cleanupTempDirs)

/** Boots `register`, serves it, runs `body`, closes the server. */
async function withServer(
  register: Register,
  body: (server: Awaited<ReturnType<typeof serve>>) => Promise<void>,
  options: Parameters<typeof bootKernel>[1] = {},
): Promise<void> {
  const server = await serve(await bootKernel(register, options))
  try {
    await body(server)
  } finally {
    await server.close()
  }
}

/** The head of a raw answer, lowercased names, for headers a client library would hide. */
function headOf(text: string): string {
  return text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase()
}

describe('redirect()', () => {
  it('refuses statuses that are not redirects (a 200 or 304 with a Location)', () => {
    for (const status of [200, 201, 304, 305, 400, 999]) {
      // Refused by the types too; a JavaScript caller gets the TypeError.
      expect(() => redirect('/x', status as RedirectStatus)).toThrow(TypeError)
    }
    for (const status of [300, 301, 302, 303, 307, 308] as const) {
      expect(redirect('/x', status).status).toBe(status)
    }
  })

  it('refuses an empty URL and any control character, tab and NUL included', () => {
    expect(() => redirect('')).toThrow(TypeError)
    expect(() => redirect('/\t/evil.com')).toThrow(TypeError)
    expect(() => redirect('/x\u0000y')).toThrow(TypeError)
    expect(() => redirect('/x\u007fy')).toThrow(TypeError)
    expect(() => redirect('/\ud800')).toThrow(TypeError)
  })

  it('percent-encodes what a Location cannot hold, a backslash included, over HTTP', async () => {
    await withServer(
      (r) => {
        r.get('/go/{to}', (_req: FwRequest, to: string) => redirect(decodeURIComponent(to)))
        r.get('/keep', () => redirect('https://example.com/a?next=%2Fhome&q=a+b#top', 303))
        r.get('/url', () => redirect(new URL('https://example.com/caf\u00e9')))
      },
      async (server) => {
        const unicode = await server.send('GET', '/go/%2Fcaf%C3%A9%20%F0%9F%98%80')
        expect(unicode.status).toBe(302)
        expect(unicode.headers.location).toBe('/caf%C3%A9%20%F0%9F%98%80')
        // `/\evil.com` is `//evil.com` to a browser: encoded, it stays a path of this site.
        const slash = await server.send('GET', '/go/%2F%5Cevil.com')
        expect(slash.headers.location).toBe('/%5Cevil.com')
        const keep = await server.send('GET', '/keep')
        expect(keep.status).toBe(303)
        expect(keep.headers.location).toBe('https://example.com/a?next=%2Fhome&q=a+b#top')
        expect((await server.send('GET', '/url')).headers.location).toBe(
          'https://example.com/caf%C3%A9',
        )
        // A line break from the client never reaches the header: the handler's TypeError is a 500.
        const injected = await server.send('GET', '/go/%2Fok%0D%0ASet-Cookie:%20a=b')
        expect(injected.status).toBe(500)
        expect(injected.headers['set-cookie']).toBeUndefined()
      },
    )
  })
})

describe('Content-Length', () => {
  it('is not sent on a 204 or a 304 with a body (RFC 9110 §8.6)', async () => {
    await withServer(
      (r) => {
        r.get('/json-204', () => json({ a: 1 }, 204))
        r.get('/text-304', () => create('x', 304))
      },
      async (server) => {
        for (const path of ['/json-204', '/text-304']) {
          const text = await rawExchange(server.port, [`GET ${path} HTTP/1.1`, 'Host: x'])
          expect(headOf(text)).not.toContain('content-length')
        }
      },
    )
  })

  it("is json()'s own, whatever the headers passed to it say", async () => {
    await withServer(
      (r) => r.get('/j', () => json({ hello: 'world' }, 200, { 'Content-Length': '2' })),
      async (server) => {
        const answer = await server.send('GET', '/j')
        expect(answer.headers['content-length']).toBe('17')
        expect(JSON.parse(answer.text)).toEqual({ hello: 'world' })
      },
    )
  })

  it("of an error's own headers does not cut its body or desync the connection", async () => {
    const wire = await serveWire((r) => {
      r.get('/bad', () => {
        throw badRequest('nope', { headers: { 'Content-Length': '1', 'x-kept': 'yes' } })
      })
      r.get('/ok', () => ({ ok: true }))
    })
    try {
      const request = (path: string) => head([`GET ${path} HTTP/1.1`, 'Host: x'])
      const { text } = await exchange(wire.port, request('/bad') + request('/ok'), { waitMs: 500 })
      const [bad, ok] = splitAnswers(text)
      expect(bad!.status).toBe(400)
      expect(bad!.headers['x-kept']).toBe('yes')
      expect(JSON.parse(bad!.body)).toMatchObject({ error: 'nope', code: 400 })
      expect(ok!.status).toBe(200)
      expect(JSON.parse(ok!.body)).toEqual({ ok: true })
    } finally {
      await wire.close()
    }
  })
})

describe('what a handler returns', () => {
  it('streams an async generator instead of answering its JSON, {}', async () => {
    await withServer(
      (r) => {
        r.get('/gen', async function* () {
          yield 'a'
          yield Buffer.from('b')
        })
        r.get('/json-wins', () => ({
          async *[Symbol.asyncIterator]() {},
          toJSON: () => ({ listed: true }),
        }))
      },
      async (server) => {
        const streamed = await server.send('GET', '/gen')
        expect(streamed.status).toBe(200)
        expect(streamed.text).toBe('ab')
        expect(JSON.parse((await server.send('GET', '/json-wins')).text)).toEqual({ listed: true })
      },
    )
  })

  it('answers a function or a symbol with a 500 that the log explains, not a 200 null', async () => {
    const log = captureLogger()
    await withServer(
      (r) => {
        r.get('/fn', () => () => 1)
        r.get('/sym', () => Symbol('x'))
      },
      async (server) => {
        expect((await server.send('GET', '/fn')).status).toBe(500)
        expect((await server.send('GET', '/sym')).status).toBe(500)
        const messages = log.lines.map((l) => (l.obj as { err?: Error }).err?.message)
        expect(messages).toContain('The handler returned a function instead of a response')
        expect(messages).toContain('The handler returned a symbol instead of a response')
      },
      { log },
    )
  })

  it('takes web streams and async iterables in stream() and create()', async () => {
    const web = () =>
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('web'))
          controller.close()
        },
      })
    await withServer(
      (r) => {
        r.get('/stream-web', () => stream(web(), 200, { 'content-type': 'text/plain' }))
        r.get('/create-iter', () =>
          create(
            (async function* () {
              yield 'x,y\n'
            })(),
            201,
            { 'content-type': 'text/csv' },
          ),
        )
      },
      async (server) => {
        expect((await server.send('GET', '/stream-web')).text).toBe('web')
        const csv = await server.send('GET', '/create-iter')
        expect(csv.status).toBe(201)
        expect(csv.headers['content-type']).toBe('text/csv')
        expect(csv.text).toBe('x,y\n')
      },
    )
  })

  it('refuses a body create() cannot send (a number, an object) with a TypeError', () => {
    expect(() => create(42 as never)).toThrow(/create\(\) body must be a string, bytes or a stream/)
    expect(() => create({ a: 1 } as never)).toThrow(TypeError)
  })
})

describe('a streamed body whose chunks are not bytes', () => {
  // Before, res.write threw inside pipe's 'data' listener: an uncaught exception, the process down.
  it('is a 500 when the first chunk is an object, and the server keeps serving', async () => {
    const log = captureLogger()
    await withServer(
      (r) => {
        r.get('/objects', () => Readable.from([{ id: 1 }]))
        r.get('/late', () =>
          Readable.from(
            (async function* () {
              yield 'fine,'
              await new Promise((resolve) => setImmediate(resolve))
              yield { id: 2 }
            })(),
          ),
        )
        r.get('/ok', () => 'ok')
      },
      async (server) => {
        const early = await server.send('GET', '/objects')
        expect(early.status).toBe(500)
        expect(JSON.parse(early.text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
        // After the first chunk the status is out: the connection is cut, so the client knows.
        await expect(server.send('GET', '/late')).rejects.toThrow()
        expect((await server.send('GET', '/ok')).text).toBe('ok')
        expect(
          log.lines.some((l) =>
            /yielded an object, not a string or bytes/.test(
              String((l.obj as { err?: Error }).err?.message),
            ),
          ),
        ).toBe(true)
      },
      { log },
    )
  })

  it('is answered with the same request id in the error body as in X-Request-Id', async () => {
    await withServer(
      (r) =>
        r.get(
          '/fails',
          () =>
            new Readable({
              read() {
                this.destroy(new Error('disk gone'))
              },
            }),
        ),
      async (server) => {
        const answer = await server.send('GET', '/fails', {
          headers: { 'x-request-id': 'req-42' },
        })
        expect(answer.status).toBe(500)
        expect(answer.headers['x-request-id']).toBe('req-42')
        expect(JSON.parse(answer.text)).toEqual({
          error: 'Internal Server Error',
          code: 500,
          request_id: 'req-42',
        })
      },
    )
  })
})

describe('typed errors', () => {
  it('with a status outside 400-599 (or no number) are a 500, and the log says why', async () => {
    const log = captureLogger()
    await withServer(
      (r) => {
        r.get('/s/{kind}', (_req: FwRequest, kind: string) => {
          const status = { ok: 200, moved: 302, big: 600, nan: NaN, text: '404' }[kind]
          throw new HttpError(status as number, { message: 'leaked?' })
        })
        r.get('/custom', () => {
          throw new HttpError(450, { message: 'Blocked by parental controls' })
        })
      },
      async (server) => {
        for (const kind of ['ok', 'moved', 'big', 'nan', 'text']) {
          const answer = await server.send('GET', `/s/${kind}`)
          expect(answer.status).toBe(500)
          expect(JSON.parse(answer.text)).toMatchObject({
            error: 'Internal Server Error',
            code: 500,
          })
        }
        expect(log.lines.some((l) => /not an error status \(400-599\)/.test(l.msg ?? ''))).toBe(
          true,
        )
        const custom = await server.send('GET', '/custom')
        expect(custom.status).toBe(450)
        expect(JSON.parse(custom.text)).toMatchObject({ error: 'Blocked by parental controls' })
      },
      { log },
    )
  })

  it('methodNotAllowed takes a list, one string or nothing, and always sends Allow', async () => {
    await withServer(
      (r) => {
        r.get('/list', () => {
          throw methodNotAllowed(['GET', 'HEAD'])
        })
        r.get('/string', () => {
          throw methodNotAllowed('GET, POST')
        })
        r.get('/none', () => {
          throw (methodNotAllowed as (allow?: string[]) => HttpError)()
        })
      },
      async (server) => {
        const list = await server.send('GET', '/list')
        expect([list.status, list.headers.allow]).toEqual([405, 'GET, HEAD'])
        const string = await server.send('GET', '/string')
        expect([string.status, string.headers.allow]).toEqual([405, 'GET, POST'])
        const none = await server.send('GET', '/none')
        expect([none.status, none.headers.allow]).toEqual([405, ''])
      },
    )
  })
})

describe('file()', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-audit2-file-'))
  writeFileSync(join(dir, 'a.txt'), 'hello world')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const register: Register = (r) => {
    r.get('/a', (req: FwRequest) => file(join(dir, 'a.txt'), { request: req }))
    r.get('/nul', () => file(join(dir, 'a.txt\u0000.png')))
    r.get('/length', () => file(join(dir, 'a.txt'), { headers: { 'Content-Length': '3' } }))
  }

  it('answers a 304 without Content-Length: 0, which would misstate the file', async () => {
    await withServer(register, async (server) => {
      const { headers } = await server.send('GET', '/a')
      // Not half-closed (rawExchange): Node drops an answer that comes after the client's FIN.
      const { text } = await exchange(
        server.port,
        head(['GET /a HTTP/1.1', 'Host: x', `If-None-Match: ${headers.etag as string}`]),
        { waitMs: 500 },
      )
      expect(text.startsWith('HTTP/1.1 304')).toBe(true)
      expect(headOf(text)).not.toContain('content-length')
      expect(headOf(text)).toContain('etag: w/')
    })
  })

  it('answers a path with a NUL byte with a 404, not a 500', async () => {
    await withServer(register, async (server) => {
      expect((await server.send('GET', '/nul')).status).toBe(404)
    })
  })

  it("keeps the file's own Content-Length over one passed in headers", async () => {
    await withServer(register, async (server) => {
      const answer = await server.send('GET', '/length')
      expect(answer.headers['content-length']).toBe('11')
      expect(answer.text).toBe('hello world')
    })
  })
})

describe('a view engine that answers no text', () => {
  it('is a 500 whose log names the view, not an empty 200', async () => {
    const log = captureLogger()
    let answer: unknown
    const views = { render: () => answer as string }
    await withServer(
      (r) => r.get('/page', () => view('page')),
      async (server) => {
        for (const value of [undefined, 42, null]) {
          answer = value
          expect((await server.send('GET', '/page')).status).toBe(500)
        }
        answer = 'fine'
        expect((await server.send('GET', '/page')).text).toBe('fine')
        const messages = log.lines.map((l) => (l.obj as { err?: Error }).err?.message)
        expect(messages).toContain(
          'The view engine returned undefined for view "page", not a string',
        )
      },
      { log, views },
    )
  })
})

describe('the log option', () => {
  it('whose error() throws still lets a failing request be answered (it hung before)', async () => {
    const failing = () => {
      throw new Error('log transport closed')
    }
    const log = { debug: failing, info: failing, warn: failing, error: failing }
    await withServer(
      (r) => {
        r.get('/crash', () => {
          throw new Error('secret detail')
        })
        r.get('/gone', () => {
          throw notFound()
        })
      },
      async (server) => {
        const crash = await server.send('GET', '/crash')
        expect(crash.status).toBe(500)
        expect(crash.text).not.toContain('secret')
        expect((await server.send('GET', '/gone')).status).toBe(404)
      },
      { log },
    )
  })

  it('without one of the four methods is a boot error', async () => {
    const log = { info() {}, error() {} }
    await expect(bootKernel((r) => r.get('/', () => 'x'), { log: log as never })).rejects.toThrow(
      expect.objectContaining({
        code: 'FW_SERVE_CONFIG',
        message: 'The log option has no debug, warn method',
      }),
    )
  })
})

describe('a service provider that fails', () => {
  const routes: Register = (r) => r.get('/', () => 'x')
  const cause = new Error('database unreachable')

  it.each([
    [
      'boot() throws',
      {
        boot: () => {
          throw cause
        },
      },
      'boot()',
    ],
    ['boot() rejects', { boot: async () => Promise.reject(cause) }, 'boot()'],
    [
      'register() throws',
      {
        register: () => {
          throw cause
        },
      },
      'register()',
    ],
  ])('is a boot error naming it when %s', async (_label, provider, hook) => {
    const booting = bootKernel(routes, { serviceProviders: [{ register() {} }, provider] })
    const error = await booting.then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(error).toBeInstanceOf(FwError)
    expect(error).toMatchObject({
      code: 'FW_SERVE_CONFIG',
      message: `serviceProviders[1] failed in ${hook}: database unreachable`,
      cause,
    })
  })

  it('is a boot error naming its class when its constructor throws', async () => {
    class MailProvider {
      constructor() {
        throw cause
      }
      register(): void {}
    }
    await expect(bootKernel(routes, { serviceProviders: [MailProvider] })).rejects.toMatchObject({
      code: 'FW_SERVE_CONFIG',
      message: 'serviceProviders[0] (MailProvider) failed in its constructor: database unreachable',
    })
  })
})
