/**
 * A client that stops reading a response (a slow-read attack, or a client gone without closing)
 * held the connection, the unsent bytes and a file's descriptor for ever: Node sets no timeout
 * while a response is being sent. With `sendTimeoutMs` the connection is closed once the client
 * has taken none of the bytes for that long; a slow reader and a quiet stream are not cut.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import { createListener } from '../../../src/runtime/node-adapter.js'
import { create } from '../../../src/runtime/response.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const BODY_BYTES = 48 * 1024 * 1024 // far more than loopback's socket buffers hold
const STALL_MS = 400

const bigFile = (): string => {
  const path = join(tempDir('fw-send-stalled-'), 'big.bin')
  writeFileSync(path, Buffer.alloc(BODY_BYTES, 97))
  return path
}

/** Bytes of the response (headers included) a raw client reads. */
interface RawClient {
  socket: Socket
  received: () => number
  closed: Promise<void>
}

function rawGet(port: number, path: string, options: { paused: boolean }): Promise<RawClient> {
  return new Promise((resolve) => {
    let received = 0
    let onClose: () => void
    const closed = new Promise<void>((done) => (onClose = done))
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
      resolve({ socket, received: () => received, closed })
    })
    socket.on('data', (chunk: Buffer) => (received += chunk.length))
    socket.on('error', () => {})
    socket.on('close', () => onClose())
    if (options.paused) socket.pause()
  })
}

const openDescriptors = (): number => readdirSync('/proc/self/fd').length

async function serveWith(register: Register, sendTimeoutMs?: number) {
  const log = captureLogger()
  const kernel = await bootKernel(register, { log, sendTimeoutMs })
  return { log, server: await serve(kernel) }
}

const stalledWarnings = (log: ReturnType<typeof captureLogger>) =>
  log.lines.filter((line) => line.level === 'warn' && /took none of the response/.test(line.msg!))

describe('a client that stops reading the response', () => {
  it('is cut off after sendTimeoutMs when the body was in memory', async () => {
    const body = Buffer.alloc(BODY_BYTES, 97)
    const { log, server } = await serveWith((r) => r.get('/big', () => create(body)), STALL_MS)
    try {
      const client = await rawGet(server.port, '/big', { paused: true })
      await delay(STALL_MS * 3)
      expect(stalledWarnings(log)).toHaveLength(1)
      // Reading again, the client gets what was already on its way, then the end: not the body.
      client.socket.resume()
      await client.closed
      expect(client.received()).toBeGreaterThan(0)
      expect(client.received()).toBeLessThan(BODY_BYTES)
    } finally {
      await server.close()
    }
  })

  it('is cut off though it keeps sending bytes (a pipelined request, a line at a time)', async () => {
    const body = Buffer.alloc(BODY_BYTES, 97)
    const { log, server } = await serveWith((r) => r.get('/big', () => create(body)), STALL_MS)
    try {
      const client = await rawGet(server.port, '/big', { paused: true })
      client.socket.write('GET /big HTTP/1.1\r\nHost: x\r\n')
      // Every incoming byte restarted the socket's own timeout: it never fired.
      const trickle = setInterval(() => client.socket.write('X-Keep: 1\r\n'), STALL_MS / 4)
      try {
        await vi.waitFor(() => expect(stalledWarnings(log)).toHaveLength(1), {
          timeout: 5000,
          interval: 50,
        })
        await client.closed
      } finally {
        clearInterval(trickle)
      }
    } finally {
      await server.close()
    }
  })

  it('is cut off over TLS too (node:https), where the socket’s own timeout guards', async () => {
    const body = Buffer.alloc(BODY_BYTES, 97)
    const log = captureLogger()
    const kernel = await bootKernel((r) => r.get('/big', () => create(body)), {
      log,
      sendTimeoutMs: STALL_MS,
    })
    const fixtures = join(import.meta.dirname, '../../fixtures/tls')
    const server = createHttpsServer(
      {
        key: readFileSync(join(fixtures, 'key.pem')),
        cert: readFileSync(join(fixtures, 'cert.pem')),
      },
      createListener(() => kernel),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    const client = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () =>
      client.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'),
    )
    client.on('error', () => {})
    client.pause()
    const closed = new Promise<void>((done) => client.once('close', () => done()))
    try {
      await vi.waitFor(() => expect(stalledWarnings(log)).toHaveLength(1), {
        timeout: 5000,
        interval: 50,
      })
      client.resume()
      await closed
    } finally {
      client.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it.runIf(process.platform === 'linux')(
    'closes a stalled file download and its descriptor',
    async () => {
      const path = bigFile()
      const { log, server } = await serveWith((r) => r.get('/file', () => file(path)), STALL_MS)
      try {
        const before = openDescriptors()
        const clients = await Promise.all(
          Array.from({ length: 5 }, () => rawGet(server.port, '/file', { paused: true })),
        )
        await delay(100)
        // Each download holds its file (and its socket) while the client does not read.
        expect(openDescriptors() - before).toBeGreaterThanOrEqual(5)
        // Due after STALL_MS; timers fire late on a loaded machine (CI), so wait up to 5 s.
        await vi.waitFor(() => expect(stalledWarnings(log)).toHaveLength(5), {
          timeout: 5000,
          interval: 50,
        })
        for (const client of clients) client.socket.destroy()
        await Promise.all(clients.map((c) => c.closed))
        await vi.waitFor(() => expect(openDescriptors() - before).toBeLessThan(2), {
          timeout: 2000,
          interval: 25,
        })
      } finally {
        await server.close()
      }
    },
  )

  it('is not cut while it reads, however slowly, in pauses shorter than the timeout', async () => {
    const body = Buffer.alloc(BODY_BYTES, 97)
    const { log, server } = await serveWith((r) => r.get('/big', () => create(body)), STALL_MS)
    try {
      const client = await rawGet(server.port, '/big', { paused: true })
      // Read 6 MB, pause for half the timeout, and again, until the whole body is in.
      let next = 6 * 1024 * 1024
      let pauses = 0
      client.socket.on('data', () => {
        if (client.received() < next) return
        next += 6 * 1024 * 1024
        pauses++
        client.socket.pause()
        setTimeout(() => client.socket.resume(), STALL_MS / 2)
      })
      client.socket.resume()
      await vi.waitFor(() => expect(client.received()).toBeGreaterThan(BODY_BYTES), {
        timeout: 20_000,
        interval: 20,
      })
      // Paused once per 6 MB for half the timeout, several timeouts in all: the guard is a
      // stall, not a deadline.
      expect(pauses).toBeGreaterThanOrEqual(BODY_BYTES / (6 * 1024 * 1024) - 1)
      expect(stalledWarnings(log)).toHaveLength(0)
      // Sent, the response leaves the connection to the keep-alive timeout (Node's 5 s here).
      let closed = false
      void client.closed.then(() => (closed = true))
      await delay(STALL_MS * 3)
      expect(closed).toBe(false)
      client.socket.destroy()
    } finally {
      await server.close()
    }
  })

  it('keeps a stream that is only quiet for longer than the timeout', async () => {
    const quiet = async function* () {
      yield 'event: one\n\n'
      await delay(STALL_MS * 2.5)
      yield 'event: two\n\n'
    }
    const { log, server } = await serveWith(
      (r) => r.get('/events', () => create(Readable.from(quiet()))),
      STALL_MS,
    )
    try {
      const reply = await server.send('GET', '/events')
      expect(reply.status).toBe(200)
      expect(reply.text).toBe('event: one\n\nevent: two\n\n')
      expect(stalledWarnings(log)).toHaveLength(0)
    } finally {
      await server.close()
    }
  })

  it('waits for ever with sendTimeoutMs 0', async () => {
    const body = Buffer.alloc(BODY_BYTES, 97)
    const { log, server } = await serveWith((r) => r.get('/big', () => create(body)), 0)
    try {
      const client = await rawGet(server.port, '/big', { paused: true })
      await delay(STALL_MS * 3)
      client.socket.resume()
      while (client.received() < BODY_BYTES) await delay(20)
      expect(client.received()).toBeGreaterThan(BODY_BYTES)
      expect(stalledWarnings(log)).toHaveLength(0)
      client.socket.destroy()
    } finally {
      await server.close()
    }
  })

  it('refuses a sendTimeoutMs that is no whole number of milliseconds', async () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 31])
      await expect(
        bootKernel((r) => r.get('/', () => create('')), { sendTimeoutMs: bad }),
      ).rejects.toThrow(/sendTimeoutMs must be a whole number of milliseconds/)
    // A string (from an environment variable) is shown as one.
    await expect(
      bootKernel((r) => r.get('/', () => create('')), { sendTimeoutMs: '500' as never }),
    ).rejects.toThrow('0 (never) or more, not "500"')
  })
})
