/**
 * Review 20b: a response that closes the connection with its request body unread lingers (RFC
 * 9112 §9.6) when it waited its turn behind a pipelined one too. Its `res.socket` is null until
 * then, and the lingering close was not installed: the connection was cut under a client still
 * sending, whose system then drops the answer (a reset).
 */
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { json } from '../../src/runtime/response.js'
import { bodyRoutes } from './kernel/support.js'
import { serveWire, type WireServer } from './kernel/wire.js'

let server: WireServer

beforeAll(async () => {
  server = await serveWire((r) => {
    bodyRoutes(r)
    r.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 100))
      return json({ slow: true })
    })
  })
})

afterAll(() => server.close())

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Pipelines `requests` after a slow GET; reports the server's close while the client sends on. */
async function lingering(requests: string, statuses: string[]): Promise<[boolean, boolean]> {
  let closed = false
  const serverClosed = new Promise<void>((resolve) =>
    server.server.once('connection', (socket: Socket) =>
      socket.once('close', () => resolve(void (closed = true))),
    ),
  )
  const client = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true })
  client.on('error', () => {})
  let text = ''
  const answered = new Promise<void>((resolve) => {
    client.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
      if ((text.match(/HTTP\/1\.1 /g) ?? []).length === 2 && text.endsWith('}')) resolve()
    })
  })
  // The second request is answered before its body is read, while /slow is still in flight.
  client.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n' + requests)
  await answered
  expect(text.match(/HTTP\/1\.1 \d+/g)).toEqual(statuses)
  // Still sending its body: the server reads on.
  client.write('7\r\n{"b":2}\r\n')
  await sleep(300)
  const early = closed
  // The client ends its side: the server closes at once (never: the test's timeout).
  client.end()
  await serverClosed
  client.destroy()
  return [early, closed]
}

describe('a response with its body unread, behind a pipelined one', () => {
  it('keeps reading until the client ends, like one answered at once', async () => {
    const request =
      'POST /private HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      'Transfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n'
    expect(await lingering(request, ['HTTP/1.1 200', 'HTTP/1.1 401'])).toEqual([false, true])
  })

  it('lingers for a refusal at the wire too', { timeout: 5000 }, async () => {
    // Chunked in HTTP/1.0: refused before routing, its chunked body framed but never read.
    const request =
      'POST /echo HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n'
    expect(await lingering(request, ['HTTP/1.1 200', 'HTTP/1.1 400'])).toEqual([false, true])
  })
})
