/**
 * Long-lived and streamed responses (server-sent events, downloads, a proxied fetch() body):
 * what is released when the client goes, what a failure after the first chunk looks like on the
 * wire, backpressure, and HEAD. Leaks are counted by the handlers themselves, never timed.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { Readable } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { create, stream } from '../../src/runtime/response.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve } from './kernel/support.js'

afterAll(cleanupTempDirs)

/** A raw HTTP/1.1 client: what it read, and when the server closed the connection. */
function rawRequest(
  port: number,
  head: string,
  options: { paused?: boolean } = {},
): Promise<{ socket: Socket; text: () => string; received: () => number; closed: Promise<void> }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    let onClose!: () => void
    const closed = new Promise<void>((done) => (onClose = done))
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head)
      resolve({
        socket,
        text: () => Buffer.concat(chunks).toString('latin1'),
        received: () => received,
        closed,
      })
    })
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      chunks.push(chunk)
    })
    socket.on('error', () => {})
    socket.on('close', () => onClose())
    if (options.paused === true) socket.pause()
  })
}

const get = (path: string, method = 'GET'): string =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\n\r\n`

/** An SSE handler state: events yielded, generators open, finally blocks run. */
function sseCounters() {
  return { started: 0, open: 0, finalised: 0, pulls: 0 }
}

describe('server-sent events from an async generator', () => {
  it('runs the generator finally when the client disconnects mid-stream', async () => {
    const c = sseCounters()
    const kernel = await bootKernel((r) => {
      r.get('/events', () =>
        stream(
          (async function* () {
            c.started++
            c.open++
            const timer = setInterval(() => {}, 1000)
            try {
              for (let i = 0; ; i++) {
                c.pulls++
                yield `data: ${i}\n\n`
                await delay(20)
              }
            } finally {
              clearInterval(timer)
              c.open--
              c.finalised++
            }
          })(),
          200,
          { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
        ),
      )
    })
    const server = await serve(kernel)
    try {
      const clients = await Promise.all(
        Array.from({ length: 4 }, () => rawRequest(server.port, get('/events'))),
      )
      await vi.waitFor(() => expect(clients.every((x) => x.text().includes('data: 2'))).toBe(true))
      for (const client of clients) client.socket.destroy()
      await vi.waitFor(() => expect(c.finalised).toBe(4), { timeout: 5000 })
      expect(c.open).toBe(0)
    } finally {
      await server.close()
    }
  })
})

describe('streamed bodies and their clients', () => {
  it('cancels a web ReadableStream when the client disconnects', async () => {
    const c = { cancelled: 0, pulls: 0 }
    const kernel = await bootKernel((r) => {
      r.get('/web', () => {
        let i = 0
        return new ReadableStream({
          async pull(controller) {
            c.pulls++
            await delay(10)
            controller.enqueue(new TextEncoder().encode(`data: ${i++}\n\n`))
          },
          cancel() {
            c.cancelled++
          },
        })
      })
    })
    const server = await serve(kernel)
    try {
      const clients = await Promise.all(
        Array.from({ length: 3 }, () => rawRequest(server.port, get('/web'))),
      )
      await vi.waitFor(() => expect(clients.every((x) => x.text().includes('data: 2'))).toBe(true))
      for (const client of clients) client.socket.destroy()
      await vi.waitFor(() => expect(c.cancelled).toBe(3), { timeout: 5000 })
    } finally {
      await server.close()
    }
  })

  it('aborts the upstream of a proxied fetch() when the client disconnects', async () => {
    let upstreamClosed = 0
    let upstreamOpen = 0
    const upstream: Server = createServer((req, res) => {
      upstreamOpen++
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const timer = setInterval(() => res.write(Buffer.alloc(1024, 97)), 5)
      res.on('close', () => {
        clearInterval(timer)
        upstreamClosed++
      })
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    const upPort = (upstream.address() as AddressInfo).port
    const kernel = await bootKernel((r) => {
      r.get('/proxy', () => fetch(`http://127.0.0.1:${upPort}/`))
    })
    const server = await serve(kernel)
    try {
      const clients = await Promise.all(
        Array.from({ length: 3 }, () => rawRequest(server.port, get('/proxy'))),
      )
      await vi.waitFor(() => expect(clients.every((x) => x.received() > 4096)).toBe(true))
      expect(upstreamOpen).toBe(3)
      for (const client of clients) client.socket.destroy()
      await vi.waitFor(() => expect(upstreamClosed).toBe(3), { timeout: 5000 })
    } finally {
      await server.close()
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it('a generator failing after its first chunk cuts the connection without the last chunk, logged once, finally run', async () => {
    const c = { finalised: 0 }
    const log = captureLogger()
    const kernel = await bootKernel(
      (r) => {
        r.get('/fails', async function* () {
          try {
            yield 'data: 1\n\n'
            await delay(20)
            yield 'data: 2\n\n'
            await delay(20)
            throw new Error('db went away')
          } finally {
            c.finalised++
          }
        })
      },
      { log },
    )
    const server = await serve(kernel)
    try {
      const client = await rawRequest(server.port, get('/fails'))
      await client.closed
      const text = client.text()
      expect(text).toMatch(/^HTTP\/1\.1 200/)
      expect(text).toContain('data: 2')
      expect(text).toMatch(/transfer-encoding: chunked/i)
      expect(text.endsWith('\r\n0\r\n\r\n')).toBe(false)
      expect(c.finalised).toBe(1)
      const lines = log.lines.filter((l) => l.level === 'warn' || l.level === 'error')
      expect(lines.map((l) => l.msg)).toEqual(['Streaming the response body failed'])
      expect((lines[0]!.obj as { err: Error }).err.message).toBe('db went away')
    } finally {
      await server.close()
    }
  })

  it('a client that stops reading is cut after sendTimeoutMs, the generator finalised and never pulled far ahead', async () => {
    const c = { pulls: 0, finalised: 0 }
    const log = captureLogger()
    const kernel = await bootKernel(
      (r) => {
        r.get('/fast', async function* () {
          try {
            for (;;) {
              c.pulls++
              yield Buffer.alloc(16 * 1024, 97)
            }
          } finally {
            c.finalised++
          }
        })
      },
      { log, sendTimeoutMs: 300 },
    )
    const server = await serve(kernel)
    try {
      const client = await rawRequest(server.port, get('/fast'), { paused: true })
      await vi.waitFor(() => expect(c.finalised).toBe(1), { timeout: 10000 })
      // Reading again, the client gets what was on its way, then the end.
      client.socket.resume()
      await client.closed
      // What the socket buffers and the stream's own buffers hold, not an endless pull.
      expect(c.pulls * 16 * 1024).toBeLessThan(32 * 1024 * 1024)
      expect(log.lines.some((l) => /took none of the response/.test(l.msg ?? ''))).toBe(true)
    } finally {
      await server.close()
    }
  })

  it('HEAD of a streamed route runs no step of its generator and reads nothing of its stream', async () => {
    const c = { started: 0, pulls: 0, finalised: 0 }
    const kernel = await bootKernel((r) => {
      r.get('/gen', async function* () {
        c.started++
        try {
          for (let i = 0; i < 1000; i++) {
            c.pulls++
            yield `data: ${i}\n\n`
          }
        } finally {
          c.finalised++
        }
      })
      r.get('/readable', () => {
        let i = 0
        return new Readable({
          read() {
            c.pulls++
            this.push(i++ < 1000 ? 'x'.repeat(100) : null)
          },
        })
      })
    })
    const server = await serve(kernel)
    try {
      const reply = await server.send('HEAD', '/gen')
      expect(reply.status).toBe(200)
      expect(reply.text).toBe('')
      await server.send('HEAD', '/readable')
      // The generator's first step (a database query, say) is not run to be thrown away.
      expect(c).toEqual({ started: 0, pulls: 0, finalised: 0 })
    } finally {
      await server.close()
    }
  })
})

describe('a proxied fetch() whose upstream fails mid-body', () => {
  it('cuts the client connection without the last chunk', async () => {
    const upstream: Server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.write('part one;')
      setTimeout(() => res.socket?.destroy(), 30)
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    const upPort = (upstream.address() as AddressInfo).port
    const log = captureLogger()
    const kernel = await bootKernel(
      (r) => {
        r.get('/proxy', () => fetch(`http://127.0.0.1:${upPort}/`))
      },
      { log },
    )
    const server = await serve(kernel)
    try {
      const client = await rawRequest(server.port, get('/proxy'))
      await client.closed
      expect(client.text()).toMatch(/^HTTP\/1\.1 200/)
      expect(client.text()).toContain('part one;')
      expect(client.text().endsWith('\r\n0\r\n\r\n')).toBe(false)
      expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toHaveLength(1)
    } finally {
      await server.close()
      upstream.close()
    }
  })
})

describe('a client gone before the first event', () => {
  it('finalises the generator once it steps, and logs nothing', async () => {
    const c = { started: 0, finalised: 0 }
    const log = captureLogger()
    const kernel = await bootKernel(
      (r) => {
        r.get('/late', async function* () {
          c.started++
          try {
            await delay(150)
            for (;;) {
              yield 'data: x\n\n'
              await delay(10)
            }
          } finally {
            c.finalised++
          }
        })
      },
      { log },
    )
    const server = await serve(kernel)
    try {
      const client = await rawRequest(server.port, get('/late'))
      await vi.waitFor(() => expect(c.started).toBe(1))
      client.socket.destroy()
      await vi.waitFor(() => expect(c.finalised).toBe(1), { timeout: 5000 })
      expect(client.text()).toBe('')
      expect(log.lines.filter((l) => l.level !== 'debug' && l.level !== 'info')).toEqual([])
    } finally {
      await server.close()
    }
  })
})

describe('a streamed body failing after its first chunk, sent without chunked encoding', () => {
  it('resets the connection: a close-delimited body ended by a plain close would look complete', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/fails', async function* () {
        yield 'data: 1\n\n'
        await delay(20)
        throw new Error('db went away')
      })
      r.get('/fine', async function* () {
        yield 'data: 1\n\n'
        await delay(20)
        yield 'data: 2\n\n'
      })
    })
    const server = await serve(kernel)
    // An HTTP/1.0 request (nginx proxies so by default): no chunked encoding, the body ends with
    // the connection.
    const ending = async (path: string) => {
      const client = await rawRequest(server.port, `GET ${path} HTTP/1.0\r\nHost: x\r\n\r\n`)
      const how = await new Promise<string>((resolve) => {
        client.socket.removeAllListeners('error')
        client.socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
        client.socket.on('end', () => resolve('end'))
      })
      return { how, text: client.text() }
    }
    try {
      const failed = await ending('/fails')
      expect(failed.text).toMatch(/^HTTP\/1\.1 200/)
      expect(failed.text).not.toMatch(/transfer-encoding|content-length/i)
      expect(failed.how).toBe('ECONNRESET')
      // A body that ends well still ends with a plain close.
      const fine = await ending('/fine')
      expect(fine).toEqual({ how: 'end', text: expect.stringMatching(/data: 2\n\n$/) })
    } finally {
      await server.close()
    }
  })
})
