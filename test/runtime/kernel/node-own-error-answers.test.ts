/**
 * Regression: some answers came from Node itself, bypassing fw's error format (a JSON body,
 * Cache-Control: no-store, X-Content-Type-Options: nosniff): the empty 400 for an HTTP/1.1 request
 * without Host, the empty 417 for an unknown expectation, and the parse-failure answers (400,
 * 431…) and the listener's own 400, which lacked nosniff.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../../src/runtime/kernel.js'
import { silentLogger } from '../../../src/runtime/logger.js'
import { createListener } from '../../../src/runtime/node-adapter.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type RawAnswer, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/attributes', (req: FwRequest) => ({ host: req.getHost() }))
    r.post('/echo', (req: FwRequest) => ({ input: req.input() }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** The one answer to `request`, which must close the connection. */
async function onlyAnswer(request: string): Promise<RawAnswer> {
  const { text, closed } = await exchange(wire.port, request)
  const answers = splitAnswers(text)
  expect(answers).toHaveLength(1)
  expect(closed).toBe(true)
  return answers[0]!
}

function expectFwError(answer: RawAnswer, status: number): void {
  expect(answer.status).toBe(status)
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(answer.headers['cache-control']).toBe('no-store')
  expect(answer.headers['x-content-type-options']).toBe('nosniff')
  expect(answer.headers.connection).toBe('close')
  expect(JSON.parse(answer.body)).toMatchObject({ code: status })
}

describe('an HTTP/1.1 request without Host', () => {
  it('is a JSON 400 from fw (RFC 9112 §3.2), not Node’s empty one', async () => {
    const answer = await onlyAnswer(head(['GET /attributes HTTP/1.1']))
    expectFwError(answer, 400)
    expect(JSON.parse(answer.body).error).toMatch(/Host/)
  })

  it('is a 400 with an absolute-form target too', async () => {
    expectFwError(await onlyAnswer(head(['GET http://x/attributes HTTP/1.1'])), 400)
  })

  it('is still served over HTTP/1.0, which has no Host requirement', async () => {
    const [answer] = splitAnswers(
      (await exchange(wire.port, head(['GET /attributes HTTP/1.0']))).text,
    )
    expect(answer!.status).toBe(200)
  })
})

describe('an expectation other than 100-continue', () => {
  it('is a JSON 417', async () => {
    const request = head(['GET /attributes HTTP/1.1', 'Host: x', 'Expect: something-else'])
    expectFwError(await onlyAnswer(request), 417)
  })

  it('leaves 100-continue working', async () => {
    const request = head([
      'POST /echo HTTP/1.1',
      'Host: x',
      'Expect: 100-continue',
      'Content-Type: application/json',
      'Content-Length: 7',
      'Connection: close',
    ])
    const { text } = await exchange(wire.port, [request, '{"a":1}'], { gapMs: 50 })
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/)
    expect(text).toMatch(/\{"input":\{"a":1\}\}$/)
  })
})

describe('a request Node cannot parse', () => {
  it('is a 400 with no-store and nosniff', async () => {
    const request = head(['GET /attributes HTTP/1.1', 'Host: x', 'no colon here'])
    const answer = await onlyAnswer(request)
    expectFwError(answer, 400)
    expect(JSON.parse(answer.body)).toEqual({ error: 'Bad Request', code: 400 })
  })

  it('is a 431 with no-store and nosniff when its headers are over the size limit', async () => {
    const request = head(['GET /attributes HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`])
    expectFwError(await onlyAnswer(request), 431)
  })
})

describe("the listener's own 400 for a request it cannot build", () => {
  it('carries no-store and nosniff', async () => {
    const broken = {
      log: silentLogger,
      get requestOptions(): never {
        throw new Error('cannot build the request')
      },
    } as unknown as Kernel
    const server = createServer(createListener(() => broken))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const { text } = await exchange(port, head(['GET / HTTP/1.1', 'Host: x']))
      const [answer] = splitAnswers(text)
      expectFwError(answer!, 400)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('an absolute-form target of another scheme than http or https', () => {
  it('is a JSON 400 (RFC 9112 §3.2.2), not routed by its authority and path', async () => {
    for (const target of ['ftp://acme.example.com/attributes', 'gopher://x/attributes']) {
      const answer = await onlyAnswer(head([`GET ${target} HTTP/1.1`, 'Host: acme.example.com']))
      expectFwError(answer, 400)
      expect(JSON.parse(answer.body).error).toBe(
        'The request target names a scheme other than http or https',
      )
    }
  })

  it('is a 400 with a chunked body too', async () => {
    const answer = await onlyAnswer(
      head(
        [
          'POST ftp://acme.example.com/echo HTTP/1.1',
          'Host: acme.example.com',
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
        ],
        '2\r\n{}\r\n0\r\n\r\n',
      ),
    )
    expectFwError(answer, 400)
  })

  it('leaves http and https targets (any case) to be served', async () => {
    for (const target of [
      'http://acme.example.com/attributes',
      'HTTPS://acme.example.com/attributes',
    ]) {
      const { text } = await exchange(
        wire.port,
        head([`GET ${target} HTTP/1.1`, 'Host: acme.example.com', 'Connection: close']),
      )
      const [answer] = splitAnswers(text)
      expect([answer!.status, JSON.parse(answer!.body)], target).toEqual([
        200,
        { host: 'acme.example.com' },
      ])
    }
  })
})

describe('an X-Forwarded-Host from a trusted proxy that names no host', () => {
  it('is a 400, as such a Host is: not a fall back to the Host header', async () => {
    for (const forwarded of [
      'u@acme.example.com',
      'acme.example.com:99999',
      'ac me.example.com',
      'acme.example.com, ',
    ]) {
      const { text } = await exchange(
        wire.port,
        head([
          'GET /attributes HTTP/1.1',
          'Host: backend.internal:3000',
          `X-Forwarded-Host: ${forwarded}`,
          'Connection: close',
        ]),
      )
      const [answer] = splitAnswers(text)
      expect(answer!.status, forwarded).toBe(400)
      expect(JSON.parse(answer!.body).error, forwarded).toBe('Invalid X-Forwarded-Host header')
    }
  })
})
