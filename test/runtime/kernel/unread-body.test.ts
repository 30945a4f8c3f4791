/**
 * A request answered before its body was read (a guard's 401, a declared length over the limit)
 * over real sockets: a small rest is drained and the connection kept; a large or unknown one
 * closes the connection instead of being read to the end.
 */
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { json } from '../../../src/runtime/response.js'
import { bodyRoutes, bootKernel, cleanupTempDirs, serve } from './support.js'

let server: Awaited<ReturnType<typeof serve>>

beforeAll(async () => {
  const kernel = await bootKernel((r) => {
    bodyRoutes(r)
    r.get('/ping', () => json({ pong: true }), 'ping')
  })
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

interface Exchange {
  /** Status lines of the responses received, in order. */
  statuses: string[]
  /** Their Connection headers. */
  connection: string[]
  /** Whether the server closed the connection. */
  closed: boolean
}

/** Writes `head` (and `body`), then a GET /ping on the same connection; collects what comes back. */
function exchange(head: string[], body = ''): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(server.port, '127.0.0.1')
    let text = ''
    let closed = false
    let asked = false
    const done = (): void => {
      resolve({
        statuses: [...text.matchAll(/HTTP\/1\.1 \d{3} [^\r]*/g)].map((m) => m[0]),
        connection: [...text.matchAll(/^connection: ([^\r]*)/gim)].map((m) => m[1]!),
        closed,
      })
    }
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
      if (asked || !text.includes('\r\n\r\n')) return
      // The first answer is in: ask again on the same connection (a closed one never answers).
      asked = true
      if (!socket.destroyed) socket.write('GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n', () => {})
      setTimeout(() => {
        socket.destroy()
        done()
      }, 300)
    })
    socket.on('close', () => (closed = true))
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error)
    })
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
  })
}

describe('a response sent before the request body was read', () => {
  it('drains a small body and keeps the connection for the next request', async () => {
    const body = '{"a":1}'
    const result = await exchange(
      [
        'POST /private HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
      ],
      body,
    )
    expect(result.statuses).toEqual(['HTTP/1.1 401 Unauthorized', 'HTTP/1.1 200 OK'])
    expect(result.connection[0]).toBe('keep-alive')
  })

  it('closes the connection after a 413 for a declared length it would take long to drain', async () => {
    const result = await exchange(
      [
        'POST /echo HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${1024 ** 3}`,
      ],
      '{"a":',
    )
    expect(result.statuses).toEqual(['HTTP/1.1 413 Payload Too Large'])
    expect(result.connection).toEqual(['close'])
    expect(result.closed).toBe(true)
  })

  it('closes the connection when the unread body has no declared length (chunked)', async () => {
    const result = await exchange(
      [
        'POST /private HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ],
      '7\r\n{"a":1}\r\n',
    )
    expect(result.statuses).toEqual(['HTTP/1.1 401 Unauthorized'])
    expect(result.connection).toEqual(['close'])
    expect(result.closed).toBe(true)
  })

  it('keeps the connection when the body was read, chunked or not', async () => {
    const result = await exchange(
      [
        'POST /echo HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ],
      '7\r\n{"a":1}\r\n0\r\n\r\n',
    )
    expect(result.statuses).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK'])
    expect(result.connection[0]).toBe('keep-alive')
  })
})
