/**
 * Audit 20, on the wire: a connection closed while the client is still sending its request body
 * (a 413 for a declared length over the limit, answered before a byte of it is read) is closed in
 * stages (RFC 9112 §9.6), so the client reads the 413 instead of a reset (EPIPE / ECONNRESET, as
 * Python's http.client got); and nothing read while it lingers is handled as a request.
 */
import { execFile } from 'node:child_process'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { json } from '../../src/runtime/response.js'
import { bodyRoutes, cleanupTempDirs } from './kernel/support.js'
import { serveWire, type WireServer } from './kernel/wire.js'

let server: WireServer
let counted = 0

beforeAll(async () => {
  server = await serveWire((r) => {
    bodyRoutes(r)
    r.post('/count', () => json({ count: ++counted }), 'count')
  })
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

// The uploading client, in a process of its own: in the server's, the server read the socket
// between the client's writes, and no reset ever came. It sends a POST /echo head declaring
// `size` bytes, then the bytes as fast as the socket takes them without reading first (as
// Python's http.client, curl without Expect), and prints what it got before the connection ended.
const UPLOADER = `
const [port, size] = process.argv.slice(1).map(Number)
const socket = require('node:net').connect(port, '127.0.0.1')
let text = ''
socket.on('data', (chunk) => (text += chunk.toString('latin1')))
socket.on('error', () => {})
socket.on('close', () => process.stdout.write(text))
socket.on('connect', async () => {
  socket.write('POST /echo HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n' +
    'Content-Length: ' + size + '\\r\\n\\r\\n')
  const piece = Buffer.alloc(65536, 32)
  for (let sent = 0; sent < size && socket.writable; sent += piece.length)
    if (!socket.write(piece))
      await new Promise((done) => { socket.once('drain', done); socket.once('close', done) })
})
setTimeout(() => socket.destroy(), 8000).unref()
`

function uploadTooLarge(size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', UPLOADER, String(server.port), String(size)],
      { timeout: 10_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    )
  })
}

describe('a response sent while the client is still uploading the body', () => {
  it('reaches the client: the connection is half-closed and read, not reset under it', async () => {
    for (let i = 0; i < 6; i++) {
      const text = await uploadTooLarge(8 * 1024 * 1024)
      expect(text.split('\r\n')[0], `attempt ${i + 1}`).toBe('HTTP/1.1 413 Payload Too Large')
      expect(text).toMatch(/\r\nConnection: close\r\n/i)
    }
  })

  it('handles no request that arrives while the connection lingers', async () => {
    const before = counted
    const text = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1')
      let received = ''
      socket.on('error', () => {})
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1')
        // The 401 is in: the end of the body, then a request, as a client that did not look.
        if (received.includes('\r\n\r\n{') && socket.writable)
          socket.write('0\r\n\r\nPOST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n')
      })
      socket.on('close', () => resolve(received))
      socket.write(
        'POST /private HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Transfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n',
      )
    })
    expect(text.match(/HTTP\/1\.1 /g)).toEqual(['HTTP/1.1 '])
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(counted).toBe(before)
  })
})
