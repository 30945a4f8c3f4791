/**
 * Uploaded temp files are removed when the client leaves while an async handler is still
 * running: the connection's 'close' has already fired by the time the response is ready, so
 * waiting for it (what the adapter did) left the files on disk for ever.
 */
import { readdir } from 'node:fs/promises'
import { connect } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { json } from '../../../src/runtime/response.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

const servers: Served[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  cleanupTempDirs()
})

const BOUNDARY = 'fw-abort-boundary'
const BODY =
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\n` +
  `Content-Type: text/plain\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => Promise<boolean>, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(20)
  }
  return check()
}

describe('uploaded temp files when the client aborts', () => {
  it('are removed once a slow handler finishes after the client left', async () => {
    const uploadDir = tempDir('fw-abort-')
    let entered!: () => void
    const inHandler = new Promise<void>((resolve) => (entered = resolve))
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let finished = false
    const kernel = await bootKernel(
      (r) => {
        r.post('/slow', async (req: FwRequest) => {
          entered()
          await gate
          finished = true
          return json({ files: Object.keys(req.files()) })
        })
      },
      { request: { uploadDir } },
    )
    const server = await serve(kernel)
    servers.push(server)
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(
        `POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
          `Content-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
      )
    })
    socket.on('error', () => {})
    await inHandler
    expect(await readdir(uploadDir)).toHaveLength(1)
    // The client goes away while the handler is still running, and the server notices.
    socket.destroy()
    await sleep(100)
    release()
    expect(await until(async () => finished)).toBe(true)
    expect(await until(async () => (await readdir(uploadDir)).length === 0)).toBe(true)
  })
})
