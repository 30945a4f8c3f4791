/**
 * A 205 (Reset Content) carries no content (RFC 9110 §15.3.6: a server MUST NOT generate any).
 * Node drops the body of a 204 or 304 itself but wrote a 205's: `create('done', 205)` sent
 * "done". Whatever body a handler gives a 205 is dropped, and the answer says Content-Length: 0.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { create, json, stream } from '../../../src/runtime/response.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer
let streamed: Readable | undefined

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/ok', () => ({ ok: true }))
    r.post('/form', () => create('done', 205))
    r.post('/json', () => json({ reset: true }, 205))
    r.post('/stream', () => {
      streamed = Readable.from(['a', 'b'])
      return stream(streamed, 205)
    })
    r.post('/empty', () => create('', 205))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** What POST `path` and then GET /ok answer, pipelined on one connection. */
async function thenOk(path: string) {
  const answer = await exchange(
    wire.port,
    head([`POST ${path} HTTP/1.1`, 'Host: x', 'Content-Length: 0']) +
      head(['GET /ok HTTP/1.1', 'Host: x', 'Connection: close']),
  )
  return splitAnswers(answer.text)
}

describe('a 205 answer', () => {
  it.each(['/form', '/json', '/stream', '/empty'])(
    'sends no content, says Content-Length: 0, and the next answer stays in step (%s)',
    async (path) => {
      const [reset, next, ...rest] = await thenOk(path)
      expect(reset!.status).toBe(205)
      expect(reset!.headers['content-length']).toBe('0')
      expect(reset!.headers['transfer-encoding']).toBeUndefined()
      expect(reset!.body).toBe('')
      expect(next!.status).toBe(200)
      expect(JSON.parse(next!.body)).toEqual({ ok: true })
      expect(rest).toEqual([])
    },
  )

  it('closes the stream it does not send', async () => {
    await thenOk('/stream')
    expect(streamed!.destroyed).toBe(true)
  })
})
