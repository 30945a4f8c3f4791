/**
 * Response helpers and negotiation, as a demanding user meets them. A stream destroyed without an
 * error left the response open for ever; a thenable that is no Promise (a query builder) was
 * answered as JSON `{}`; a status such as 204.5 went out as a 204 with a 200's Content-Length, and
 * `json(data).withStatus(204)` with one too; `json()` of a function was a 200 `null`; a web
 * Response whose body was read was a 500 logged as "ReadableStream is locked"; and negotiated
 * answers had no Vary, so a shared cache gave one client's language to the next.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { notFound } from '../../../src/runtime/http-error.js'
import { create, json } from '../../../src/runtime/response.js'
import { captureLogger, cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer
const log = captureLogger()

/** A thenable that is no Promise, as a query builder is: it settles a little later. */
class Query {
  readonly table = 'users'
  readonly self = this
  constructor(private readonly outcome: unknown) {}
  then(resolve: (value: unknown) => void, reject: (reason: unknown) => void): void {
    setTimeout(() => (this.outcome instanceof Error ? reject(this.outcome) : resolve(this.outcome)))
  }
}

beforeAll(async () => {
  wire = await serveWire(
    (r) => {
      r.get('/ok', () => ({ ok: true }))
      r.get('/destroyed-early', () => {
        const body = new Readable({ read() {} })
        setTimeout(() => body.destroy(), 20)
        return body
      })
      r.get('/destroyed-later', () => {
        const body = new Readable({ read() {} })
        body.push('first')
        setTimeout(() => body.destroy(), 20)
        return body
      })
      r.get('/destroyed-already', () => {
        const body = new Readable({ read() {} })
        body.destroy()
        return body
      })
      r.get('/query', () => new Query([{ id: 1 }]))
      r.get('/query-response', () => new Query(json({ made: true }, 201)))
      r.get('/query-fails', () => new Query(new Error('connection refused')))
      r.get('/status-fraction', () => create('abc', 204.5))
      r.get('/status-string', () => json({ a: 1 }, '204' as unknown as number))
      r.get('/json-204', () => json({ a: 1 }).withStatus(204))
      r.get('/json-function', () => json(() => 1))
      r.get('/json-symbol', () => json(Symbol('x')))
      r.get('/web-read', async () => {
        const response = new Response('abc')
        await response.text()
        return response
      })
      const attributes = (request: FwRequest) => ({ locale: request.getAttribute('locale') })
      r.get('/negotiated', attributes, { middleware: ['negotiate:en,fr'] })
      r.get('/negotiated-async', async (request: FwRequest) => attributes(request), {
        middleware: ['negotiate'],
      })
      r.get('/negotiated-vary', () => create('x', 200, { vary: 'Origin, accept' }), {
        middleware: ['negotiate'],
      })
      r.get('/negotiated-star', () => create('x', 200, { vary: '*' }), {
        middleware: ['negotiate'],
      })
      r.get(
        '/negotiated-fails',
        () => {
          throw notFound()
        },
        { middleware: ['negotiate'] },
      )
    },
    { log },
  )
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** Everything answered to GET `path` then GET /ok, pipelined on one connection. */
async function thenOk(path: string): Promise<ReturnType<typeof splitAnswers>> {
  const answer = await exchange(
    wire.port,
    head([`GET ${path} HTTP/1.1`, 'Host: x']) +
      head(['GET /ok HTTP/1.1', 'Host: x', 'Connection: close']),
  )
  expect(answer.closed).toBe(true)
  return splitAnswers(answer.text)
}

/** The messages logged with their error's message, since the last call. */
function logged(): string[] {
  return log.lines
    .splice(0)
    .map((line) => `${line.msg}: ${(line.obj as { err?: Error }).err?.message}`)
}

describe('a stream destroyed without an error', () => {
  it('is a 500 with the request id before its first chunk, not an answer that never comes', async () => {
    for (const path of ['/destroyed-early', '/destroyed-already']) {
      const [first, second] = await thenOk(path)
      expect(first!.status).toBe(500)
      expect(JSON.parse(first!.body)).toMatchObject({
        code: 500,
        request_id: first!.headers['x-request-id'],
      })
      expect(second!.status).toBe(200)
      expect(logged()).toContain('Unhandled error: The streamed body was closed before its end')
    }
  })

  it('cuts the connection after its first chunk, rather than leave the client waiting', async () => {
    const answer = await exchange(
      wire.port,
      head(['GET /destroyed-later HTTP/1.1', 'Host: x', 'Connection: close']),
      { waitMs: 3000 },
    )
    expect(answer.closed).toBe(true)
    expect(answer.text).toContain('first')
    expect(answer.text).not.toContain('\r\n0\r\n\r\n')
    log.lines.splice(0)
  })
})

describe('a thenable that is no Promise, returned by a handler', () => {
  it('is awaited, as a middleware answer is', async () => {
    const [query, made] = [await thenOk('/query'), await thenOk('/query-response')]
    expect(query[0]!.status).toBe(200)
    expect(JSON.parse(query[0]!.body)).toEqual([{ id: 1 }])
    expect(made[0]!.status).toBe(201)
    expect(JSON.parse(made[0]!.body)).toEqual({ made: true })
  })

  it('that rejects is the 500 of the error boundary', async () => {
    const [first, second] = await thenOk('/query-fails')
    expect(first!.status).toBe(500)
    expect(second!.status).toBe(200)
    expect(logged()).toEqual(['Unhandled error: connection refused'])
  })
})

describe('statuses and lengths', () => {
  it.each(['/status-fraction', '/status-string'])(
    'a status that is no integer is a 500, not a 204 with a length (%s)',
    async (path) => {
      const [first, second] = await thenOk(path)
      expect(first!.status).toBe(500)
      expect(second!.status).toBe(200)
      expect(logged()[0]).toMatch(/^Node refused to write the response: Invalid response status/)
    },
  )

  it('json(data).withStatus(204) declares no Content-Length (RFC 9110 §8.6)', async () => {
    const [first, second] = await thenOk('/json-204')
    expect(first!.status).toBe(204)
    expect(first!.headers).not.toHaveProperty('content-length')
    expect(second!.status).toBe(200)
  })
})

describe('what is no body', () => {
  it.each([
    ['/json-function', 'function'],
    ['/json-symbol', 'symbol'],
  ])('json() of a function or a symbol is a 500, not a 200 null (%s)', async (path, kind) => {
    const [first] = await thenOk(path)
    expect(first!.status).toBe(500)
    expect(logged()).toEqual([`Unhandled error: json() cannot serialize a ${kind}`])
  })

  it('a web Response whose body was read is a 500 that says so', async () => {
    const [first] = await thenOk('/web-read')
    expect(first!.status).toBe(500)
    expect(logged()).toEqual([
      'Unhandled error: The handler returned a web Response whose body was already read',
    ])
  })
})

describe('negotiate and Vary', () => {
  const NEGOTIATED = 'Accept, Accept-Charset, Accept-Language'

  it('names the negotiated headers in Vary, sync and async handlers alike', async () => {
    for (const path of ['/negotiated', '/negotiated-async']) {
      const [first] = await thenOk(path)
      expect(first!.headers.vary).toBe(NEGOTIATED)
    }
  })

  it("adds them to the response's own Vary once, and leaves a Vary: * alone", async () => {
    expect((await thenOk('/negotiated-vary'))[0]!.headers.vary).toBe(
      'Origin, accept, Accept-Charset, Accept-Language',
    )
    expect((await thenOk('/negotiated-star'))[0]!.headers.vary).toBe('*')
  })

  it('varies an error answered under the middleware too, and nothing outside it', async () => {
    const [failed, plain] = await thenOk('/negotiated-fails')
    expect(failed!.status).toBe(404)
    expect(failed!.headers.vary).toBe(NEGOTIATED)
    expect(plain!.headers).not.toHaveProperty('vary')
  })
})
