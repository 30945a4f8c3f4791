/**
 * Regressions of audit 26 (what app code returns or throws). A handler that returned an Error
 * instead of throwing it answered 200 `{}`; binary data other than a Uint8Array (an ArrayBuffer
 * from `await response.arrayBuffer()`, a DataView, a Uint16Array) was JSON, `{}` or numbers by
 * index; a streamed body cut short after its first chunk was logged with no request id or path;
 * `new HttpError(400, { headers: 'oops' })` sent the header lines `0: o`, `1: o`, ...; and a
 * status given as a string was logged as "status 404, not an error status"; a stream already
 * read to its end (a response kept and returned again) was an empty 200; and an inline arrow
 * registered with r.alias that answered no response was logged as "A middleware", not by its alias;
 * a Response of the `undici` package's fetch (or node-fetch's) was `{}`, a 200.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../src/runtime/http-error.js'
import { create, stream } from '../../src/runtime/response.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './kernel/support.js'

/**
 * A fetch Response of another implementation, as the `undici` package's own `fetch()` makes one
 * (a class of its own, named Response by its tag) or node-fetch's (a Node stream as its body,
 * Set-Cookie fields by `raw()`).
 */
class OtherResponse {
  readonly #inner: Response
  readonly #nodeBody: boolean
  constructor(body: string, init: ResponseInit, nodeBody = false) {
    this.#inner = new Response(body, init)
    this.#nodeBody = nodeBody
  }
  get [Symbol.toStringTag](): string {
    return 'Response'
  }
  get status(): number {
    return this.#inner.status
  }
  get type(): string {
    return 'default'
  }
  get bodyUsed(): boolean {
    return this.#inner.bodyUsed
  }
  get body(): unknown {
    const web = this.#inner.body!
    return this.#nodeBody ? Readable.fromWeb(web as never) : web
  }
  get headers(): unknown {
    const headers = this.#inner.headers
    if (!this.#nodeBody) return headers
    return {
      get: (name: string) => headers.get(name),
      forEach: (fn: (value: string, name: string) => void) => headers.forEach(fn),
      raw: () => ({ 'set-cookie': headers.getSetCookie() }),
    }
  }
}

const log = captureLogger()
let server: Served

/** What the log said last at `level`: its message and fields. */
const lastAt = (level: string): Record<string, unknown> => {
  const line = log.lines.filter((l) => l.level === level).at(-1)
  return { msg: line?.msg, ...(line?.obj as Record<string, unknown> | undefined) }
}

beforeAll(async () => {
  // Made once, returned to every request: only the first can have the stream's bytes.
  const kept = stream(Readable.from(['kept body']))
  const kept2 = Readable.from([Buffer.from('kept bytes')])
  const kernel = await bootKernel(
    (r) => {
      r.get('/error', () => new TypeError('db password in here'))
      r.get('/async-error', async () => new Error('returned later'))
      r.get('/http-error', () => new HttpError(409, { message: 'Taken' }))
      r.get('/array-buffer', () => new TextEncoder().encode('ab').buffer)
      r.get('/data-view', () => new DataView(new TextEncoder().encode('xcdx').buffer, 1, 2))
      r.get('/uint16', () => new Uint16Array([0x6665]))
      r.get('/blob', () => new Blob(['gh'], { type: 'text/csv' }))
      r.get('/generator', function* () {
        yield 'a'
      })
      r.get('/cut', () => {
        let sent = false
        return new Readable({
          read() {
            if (sent) return void setTimeout(() => this.destroy(new Error('upstream gone')), 10)
            sent = true
            this.push('first')
          },
        })
      })
      r.get('/too-long', () =>
        stream(Readable.from([Buffer.from('hello')]), 200, { 'content-length': '2' }),
      )
      r.get('/headers-string', () => {
        throw new HttpError(400, { headers: 'oops' as never })
      })
      r.get('/headers-web', () => {
        const headers = new Headers({ 'x-a': 'b' })
        headers.append('set-cookie', 'a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT')
        headers.append('set-cookie', 'b=2')
        throw new HttpError(502, { headers: headers as never })
      })
      // An inline arrow has no name: the log named it "A middleware".
      r.alias('tenant', ((req: never, next: (r: never) => unknown) => {
        void next(req)
      }) as never)
      r.get('/tenant', () => 'x', { middleware: ['tenant'] })
      r.get('/tenant-acme', () => 'x', { middleware: ['tenant:acme'] })
      const init = {
        status: 201,
        headers: [
          ['x-a', 'b'],
          ['set-cookie', 'a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT'],
          ['set-cookie', 'b=2'],
        ] as [string, string][],
      }
      r.get('/undici-response', () => new OtherResponse('from undici', init))
      r.get('/node-fetch-response', () => new OtherResponse('from node-fetch', init, true))
      r.get('/kept', () => kept)
      r.get('/kept-readable', () => kept2)
      r.get('/status-string', () => {
        throw new HttpError('404' as never)
      })
      r.get('/response-status-string', () => create('x', '201' as never))
      r.get('/body-list', () => {
        throw new HttpError(400, { body: [1, 2] as never })
      })
    },
    { log },
  )
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('a returned error', () => {
  it('is answered as thrown: a 500 whose details go to the log only', async () => {
    log.lines.length = 0
    const reply = await server.send('GET', '/error')
    expect(reply.status).toBe(500)
    expect(reply.text).not.toContain('password')
    expect(JSON.parse(reply.text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
    expect(String(lastAt('error').err)).toBe('TypeError: db password in here')

    expect((await server.send('GET', '/async-error')).status).toBe(500)
  })

  it('keeps an HttpError its status', async () => {
    const reply = await server.send('GET', '/http-error')
    expect([reply.status, JSON.parse(reply.text).error]).toEqual([409, 'Taken'])
  })
})

describe('binary data', () => {
  it.each([
    ['/array-buffer', 'ab'],
    ['/data-view', 'cd'],
    ['/uint16', 'ef'],
  ])('%s is sent as its bytes', async (path, text) => {
    const reply = await server.send('GET', path)
    expect(reply.status).toBe(200)
    expect(reply.headers['content-type']).toBe('application/octet-stream')
    expect([reply.headers['content-length'], reply.text]).toEqual(['2', text])
  })
})

describe('a Blob and a generator', () => {
  it('sends a Blob as its bytes, of its type', async () => {
    const reply = await server.send('GET', '/blob')
    expect([reply.status, reply.headers['content-type'], reply.text]).toEqual([
      200,
      'text/csv',
      'gh',
    ])
    expect(reply.headers['content-length']).toBe('2')
  })

  it('answers a (synchronous) generator with a 500 that says to make it async', async () => {
    log.lines.length = 0
    expect((await server.send('GET', '/generator')).status).toBe(500)
    expect(String(lastAt('error').err)).toMatch(/returned a generator: make it an async generator/)
  })
})

describe('a streamed body cut short', () => {
  it.each([
    ['/cut', 'Streaming the response body failed'],
    ['/too-long', 'A streamed body does not match its Content-Length'],
  ])('%s is logged with its request id and path', async (path, msg) => {
    log.lines.length = 0
    await server.send('GET', path).catch(() => undefined)
    await expect.poll(() => lastAt('warn').msg).toBe(msg)
    expect(lastAt('warn')).toMatchObject({
      path,
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    })
  })
})

describe('HttpError options', () => {
  it('takes headers given as a Headers object (they were dropped)', async () => {
    const reply = await server.send('GET', '/headers-web')
    expect([reply.status, reply.headers['x-a']]).toEqual([502, 'b'])
    // One line each: the entries joined them with ", ", which Expires holds too.
    expect(reply.headers['set-cookie']).toEqual([
      'a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT',
      'b=2',
    ])
  })

  it.each(['/headers-string', '/body-list'])(
    '%s: headers or a body that is no map is a 500 naming the option',
    async (path) => {
      log.lines.length = 0
      const reply = await server.send('GET', path)
      expect(reply.status).toBe(500)
      expect(Object.keys(reply.headers)).not.toContain('0')
      expect(String(lastAt('error').err)).toMatch(
        /^TypeError: HttpError (headers|body) must be an object of names and values/,
      )
    },
  )
})

describe('a status given as a string', () => {
  it('is named as one in the log of its 500', async () => {
    log.lines.length = 0
    expect((await server.send('GET', '/status-string')).status).toBe(500)
    expect(lastAt('error').msg).toBe(
      'An HttpError has status "404" (a string), not an error status (400-599)',
    )
    log.lines.length = 0
    expect((await server.send('GET', '/response-status-string')).status).toBe(500)
    expect(String(lastAt('error').err)).toBe('RangeError: Invalid response status "201" (a string)')
  })
})

describe('a Response of another fetch implementation', () => {
  it.each([
    ['/undici-response', 'from undici'],
    ['/node-fetch-response', 'from node-fetch'],
  ])('%s is answered with its status, headers and body, not `{}`', async (path, text) => {
    const reply = await server.send('GET', path)
    expect([reply.status, reply.text, reply.headers['x-a']]).toEqual([201, text, 'b'])
    expect(reply.headers['set-cookie']).toEqual([
      'a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT',
      'b=2',
    ])
  })
})

describe('a stream already read to its end', () => {
  it.each(['/kept', '/kept-readable'])(
    '%s: the second answer is a 500, not an empty 200',
    async (path) => {
      const first = await server.send('GET', path)
      expect([first.status, first.text]).toEqual([
        200,
        path === '/kept' ? 'kept body' : 'kept bytes',
      ])
      log.lines.length = 0
      const second = await server.send('GET', path)
      expect(second.status).toBe(500)
      expect(String(lastAt('error').err)).toMatch(/already read to its end: a stream is sent once/)
    },
  )
})

describe('an alias of an anonymous function', () => {
  it.each(['/tenant', '/tenant-acme'])('%s: its failure names the alias', async (path) => {
    log.lines.length = 0
    expect((await server.send('GET', path)).status).toBe(500)
    expect(String(lastAt('error').err)).toMatch(
      /^TypeError: Middleware "tenant" returned undefined/,
    )
  })
})
