/**
 * Responses as an outside test-writer meets them (audit 19). A streamed body on a 204 or 304 was
 * read to its end only to be dropped by Node, which ignores writes to an answer without content:
 * an endless async generator froze the whole process (each write "succeeded" at once, so the
 * reading never waited for the event loop), and a finite one was drained, a file read whole.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { create, stream } from '../../../src/runtime/response.js'
import { cleanupTempDirs, captureLogger, type Register } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

const LIMIT = 5000
const generators = { started: 0, yielded: 0, closed: 0 }

/** A long in-memory body: it never waits for I/O, so only backpressure or a close stops it. */
async function* long(): AsyncGenerator<string> {
  generators.started++
  try {
    for (let i = 0; i < LIMIT; i++) {
      generators.yielded++
      yield 'x'
    }
  } finally {
    generators.closed++
  }
}

const routes: Register = (r) => {
  r.get('/ok', () => ({ ok: true }))
  r.get('/stream-204', () => stream(long(), 204))
  r.get('/stream-304', () => create(long(), 304, { etag: '"v1"' }))
}

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire(routes, { log: captureLogger() })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** What GET `path` and then GET /ok answer, pipelined on one connection. */
async function thenOk(server: WireServer, path: string) {
  const answer = await exchange(
    server.port,
    head([`GET ${path} HTTP/1.1`, 'Host: x']) +
      head(['GET /ok HTTP/1.1', 'Host: x', 'Connection: close']),
  )
  return splitAnswers(answer.text)
}

describe('a streamed body on an answer without content (204, 304)', () => {
  it.each(['/stream-204', '/stream-304'])(
    '%s closes the body unread instead of draining it, and the connection serves on',
    async (path) => {
      generators.started = generators.yielded = generators.closed = 0
      const [first, second] = await thenOk(wire, path)
      expect(first!.status).toBe(path.endsWith('204') ? 204 : 304)
      expect(first!.body).toBe('')
      expect(first!.headers['content-length']).toBeUndefined()
      expect(second!.status).toBe(200)
      // Any generator started is closed (returned), not left open.
      await vi.waitFor(() => expect(generators.closed).toBe(generators.started))
      // Drained, the generator ran all LIMIT steps; an endless one froze the process.
      expect(generators.yielded).toBeLessThan(LIMIT)
    },
  )
})
