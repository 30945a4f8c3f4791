/**
 * A response Node refuses to write part-way (a header value with CR/LF, NUL or a character over
 * U+00FF, say one echoed from the query) is answered with a clean 500 on a raw keep-alive socket:
 * its own reason phrase and Content-Length, the error boundary's headers, and the next response
 * on the same connection starts where the client expects it. The 500 used to go out as
 * "500 OK" with the refused response's Content-Length, which desynchronised the connection.
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Readable } from 'node:stream'
import { create, FwResponse, json, noContent } from '../../../src/runtime/response.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './support.js'

let served: Served
let streamed: Readable | undefined
const log = captureLogger()

beforeAll(async () => {
  const kernel = await bootKernel(
    (r) => {
      r.get('/echo', (req: FwRequest) =>
        json({ ok: true }, 200, { 'x-echo': String(req.query('v')) }),
      )
      r.get('/wide', () => json({}, 200, { 'x-a': 'a\u0100' }))
      r.get('/nul', () => json({}, 200, { 'x-a': 'a\u0000b' }))
      r.get('/empty', () => noContent({ 'x-a': 'a\r\nb' }))
      r.get('/status', () => create('x', 1000))
      r.get('/ok', () => 'ok')
      r.get('/stream', () => {
        streamed = new Readable({ read() {} })
        return new FwResponse(200, { 'x-a': 'a\r\nb' }, streamed)
      })
    },
    { log },
  )
  served = await serve(kernel)
})

afterAll(async () => {
  await served.close()
  cleanupTempDirs()
})

interface Parsed {
  statusLine: string
  headers: Record<string, string>
  body: string
}

/**
 * Sends `first` then `GET /ok` pipelined on one connection, and parses the bytes strictly by
 * Content-Length: a wrong length shows as a second response that does not start with HTTP/1.1.
 */
function pipelined(first: string, method = 'GET'): Promise<Parsed[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(served.port, '127.0.0.1', () => {
      socket.write(
        `${method} ${first} HTTP/1.1\r\nHost: x\r\n\r\n` +
          'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      )
    })
    let raw = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => (raw = Buffer.concat([raw, chunk])))
    socket.on('error', reject)
    socket.on('end', () => resolve(parseAll(raw, method)))
    setTimeout(() => {
      socket.destroy()
      resolve(parseAll(raw, method))
    }, 2000)
  })
}

function parseAll(raw: Buffer, firstMethod: string): Parsed[] {
  const out: Parsed[] = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) {
      out.push({ statusLine: rest.toString('latin1'), headers: {}, body: '' })
      break
    }
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const noBody = out.length === 0 && firstMethod === 'HEAD'
    const length = noBody ? 0 : Number(headers['content-length'] ?? 0)
    out.push({
      statusLine,
      headers,
      body: rest.subarray(end + 4, end + 4 + length).toString('latin1'),
    })
    rest = rest.subarray(end + 4 + length)
  }
  return out
}

function expectClean500(response: Parsed | undefined, body = true): void {
  expect(response?.statusLine).toBe('HTTP/1.1 500 Internal Server Error')
  expect(response?.headers['cache-control']).toBe('no-store')
  expect(response?.headers['x-content-type-options']).toBe('nosniff')
  const id = response?.headers['x-request-id']
  expect(id).toMatch(/^[0-9a-f-]{36}$/)
  if (body) {
    expect(JSON.parse(response!.body)).toEqual({
      error: 'Internal Server Error',
      code: 500,
      request_id: id,
    })
  }
}

describe('a response Node refuses to write', () => {
  it('answers a clean 500 to a header injected from the query, and the next response parses', async () => {
    const [first, second, extra] = await pipelined('/echo?v=a%0d%0aSet-Cookie:%20x=1')
    expectClean500(first)
    expect(first?.headers['set-cookie']).toBeUndefined()
    expect(second?.statusLine).toBe('HTTP/1.1 200 OK')
    expect(second?.body).toBe('ok')
    expect(extra).toBeUndefined()
    expect(
      log.lines.some(
        (line) =>
          line.level === 'error' &&
          (line.obj as { err?: { code?: string } }).err?.code === 'ERR_INVALID_CHAR',
      ),
    ).toBe(true)
  })

  it('does the same for NUL, a character over U+00FF and an invalid status', async () => {
    for (const path of ['/wide', '/nul', '/status']) {
      const [first, second, extra] = await pipelined(path)
      expectClean500(first)
      expect({ path, second: second?.statusLine, body: second?.body }).toEqual({
        path,
        second: 'HTTP/1.1 200 OK',
        body: 'ok',
      })
      expect(extra).toBeUndefined()
    }
  })

  it('sends the 500 body even when the refused response was a 204', async () => {
    const [first, second, extra] = await pipelined('/empty')
    expectClean500(first)
    expect(second?.body).toBe('ok')
    expect(extra).toBeUndefined()
  })

  it('sends no body to HEAD, with the connection still in step', async () => {
    const [first, second, extra] = await pipelined('/echo?v=%0d%0a', 'HEAD')
    expectClean500(first, false)
    expect(second?.statusLine).toBe('HTTP/1.1 200 OK')
    expect(second?.body).toBe('ok')
    expect(extra).toBeUndefined()
  })

  // The stream (a file's descriptor, say) was never read and never closed.
  it('closes a stream body it will not send', async () => {
    const reply = await served.send('GET', '/stream')
    expect(reply.status).toBe(500)
    expect(streamed?.destroyed).toBe(true)
  })
})
