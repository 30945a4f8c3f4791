/**
 * A client that sends several requests at once (pipelining) and leaves while the first answer is
 * still going out: Node never emits 'close' on the responses queued behind it. Their streamed
 * bodies were never stopped (an async generator's `finally` never ran, a file stayed open until
 * garbage collection, a web stream's timer fired for ever) and their uploaded temp files stayed
 * on disk. Now each is released when the connection closes.
 */
import { readdir } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { afterAll, describe, expect, it, vi } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { json, stream } from '../../../src/runtime/response.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './support.js'

const servers: Served[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  cleanupTempDirs()
})

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(20)
  }
  return check()
}

const BOUNDARY = 'fw-pipelined-boundary'
const UPLOAD =
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\n` +
  `Content-Type: text/plain\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`

const uploadDir = tempDir('fw-pipelined-')
const generators = { started: 0, finished: 0 }
const handled = { upload: 0 }
const log = captureLogger()
let releaseSlow!: () => void
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve))

async function server(): Promise<Served> {
  const kernel = await bootKernel(
    (r) => {
      // 8 MiB the client never reads: the answers behind it wait in Node's queue.
      r.get('/big', () => 'x'.repeat(8 * 1024 * 1024))
      r.get('/ticks', () =>
        stream(
          (async function* () {
            generators.started++
            try {
              for (;;) {
                yield 'tick\n'
                await sleep(10)
              }
            } finally {
              generators.finished++
            }
          })(),
        ),
      )
      // An answer still being worked out: the answers behind it wait in Node's queue.
      r.get('/slow', async () => {
        await slowGate
        return json({ slow: true })
      })
      r.post('/upload', (req: FwRequest) => {
        handled.upload++
        return json({ files: Object.keys(req.files()) })
      })
    },
    { request: { uploadDir }, log },
  )
  const served = await serve(kernel)
  servers.push(served)
  return served
}

/** Sends `text` on a new connection, and leaves once the server has started answering and `ready`. */
async function sendThenLeave(port: number, text: string, ready: () => boolean): Promise<void> {
  const socket: Socket = connect(port, '127.0.0.1', () => socket.write(text))
  socket.on('error', () => {})
  let answered = false
  socket.once('data', () => (answered = true))
  expect(await until(() => answered && ready())).toBe(true)
  socket.destroy()
}

describe('responses queued behind a pipelined one, when the client leaves', () => {
  it('stop their streamed bodies (an async generator is returned)', async () => {
    const { port } = await server()
    const requests = 'GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.concat(
      'GET /ticks HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3),
    )
    await sendThenLeave(port, requests, () => generators.started === 3)
    expect(await until(() => generators.finished === 3)).toBe(true)
    // A client that left is no failure of the app's: nothing to warn about (it could flood the log).
    await sleep(100)
    expect(log.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
  })

  it('remove their uploaded temp files', async () => {
    const { port } = await server()
    const upload =
      `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
      `Content-Length: ${Buffer.byteLength(UPLOAD)}\r\n\r\n${UPLOAD}`
    const requests = 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n' + upload.repeat(2)
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(requests))
    socket.on('error', () => {})
    expect(await until(() => handled.upload === 2)).toBe(true)
    expect(await readdir(uploadDir)).toHaveLength(2)
    socket.destroy()
    // Removed when the connection closes, though the answer before theirs never came.
    expect(await until(async () => (await readdir(uploadDir)).length === 0)).toBe(true)
    releaseSlow()
  })
})

describe('a stream of an upload the handler opened and never read', () => {
  it('is closed with the temp file once the response is done', async () => {
    const dir = tempDir('fw-peek-')
    const opened: import('node:stream').Readable[] = []
    const kernel = await bootKernel(
      (r) =>
        r.post('/peek', (req: FwRequest) => {
          const file = req.file('doc') as import('../../../src/index.js').UploadedFile
          opened.push(file.getStream())
          return json({ size: file.getSize() })
        }),
      { request: { uploadDir: dir } },
    )
    const served = await serve(kernel)
    servers.push(served)
    const reply = await served.send('POST', '/peek', {
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: UPLOAD,
    })
    expect(reply.status).toBe(200)
    expect(await until(async () => (await readdir(dir)).length === 0)).toBe(true)
    expect(await until(() => opened[0]!.destroyed)).toBe(true)
  })
})

describe('small answers queued behind a pipelined one, when the client leaves', () => {
  it('leave no timer behind (each kept its response and body for ever)', async () => {
    const kernel = await bootKernel(
      (r) => {
        r.get('/slow', async () => {
          await sleep(300)
          return json({ slow: true })
        })
        r.get('/small', () => json({ small: true }))
      },
      { sendTimeoutMs: 60_000 },
    )
    const served = await serve(kernel)
    servers.push(served)
    // Intervals the server starts and never clears while this runs (it runs in this process).
    const live = new Set<unknown>()
    let started = 0
    const { setInterval: set, clearInterval: clear } = globalThis
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((...args: Parameters<typeof set>) => {
      const timer = set(...args)
      live.add(timer)
      started++
      return timer
    }) as typeof set)
    vi.spyOn(globalThis, 'clearInterval').mockImplementation((timer) => {
      live.delete(timer)
      clear(timer)
    })
    const socket: Socket = connect(served.port, '127.0.0.1', () =>
      socket.write(
        'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n' +
          'GET /small HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50),
      ),
    )
    socket.on('error', () => {})
    // The small answers are queued behind the slow one, with their send timers running.
    await vi.waitFor(() => expect(started).toBeGreaterThanOrEqual(50), { interval: 10 })
    socket.destroy()
    try {
      await vi.waitFor(() => expect(live.size).toBe(0), { timeout: 3000, interval: 20 })
    } finally {
      vi.restoreAllMocks()
    }
  })
})
