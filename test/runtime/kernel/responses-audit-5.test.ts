/**
 * Responses a handler can get wrong without the client paying for it. A status under 200 went
 * out as an interim answer (the client waited for a final one, or took the next request's answer
 * for it; 101 switched protocols); a bodiless response kept a Content-Length copied from
 * elsewhere, a stream kept a Transfer-Encoding other than Node's chunked (`gzip`, or `chunked`
 * beside a Content-Length), so the client lost track of where the answer ended; a stream whose
 * Content-Length is no number was dropped without an answer.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { create, json, redirect, stream } from '../../../src/runtime/response.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

const text = (): Readable => Readable.from(['hello'])

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/ok', () => ({ ok: true }))
    r.get('/early-hints', () => json({ a: 1 }, 103))
    r.get('/switching', () => create('x', 101))
    r.get('/continue', () => create('x', 100))
    r.get('/six-hundred', () => json({ a: 1 }, 600))
    r.get('/moved', () => redirect('/ok', 302, { 'Content-Length': '5' }))
    r.get(
      '/web-moved',
      () =>
        new Response(null, { status: 302, headers: { location: '/ok', 'content-length': '5' } }),
    )
    r.get('/gzip', () => stream(text()).withHeader('transfer-encoding', 'gzip'))
    r.get('/both', () =>
      stream(text(), 200, { 'content-length': '5', 'transfer-encoding': 'chunked' }),
    )
    r.get('/no-number', () => stream(text(), 200, { 'content-length': 'five' }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** Everything answered to GET `path` and then GET /ok, pipelined on one connection. */
async function thenOk(path: string): Promise<string> {
  const answer = await exchange(
    wire.port,
    head([`GET ${path} HTTP/1.1`, 'Host: x']) +
      head(['GET /ok HTTP/1.1', 'Host: x', 'Connection: close']),
  )
  return answer.text
}

describe('a handler status outside 200-599', () => {
  it.each(['/early-hints', '/switching', '/continue', '/six-hundred'])(
    'is a 500 JSON error, never an interim answer, and the next answer stays in step (%s)',
    async (path) => {
      const [first, second, ...rest] = splitAnswers(await thenOk(path))
      expect(first!.status).toBe(500)
      expect(JSON.parse(first!.body)).toMatchObject({ error: 'Internal Server Error', code: 500 })
      expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
      expect(rest).toEqual([])
    },
  )
})

describe('framing headers a handler gives', () => {
  it.each(['/moved', '/web-moved'])(
    'on a response without a body: Content-Length 0, and the next answer stays in step (%s)',
    async (path) => {
      const [first, second, ...rest] = splitAnswers(await thenOk(path))
      expect(first).toMatchObject({ status: 302, body: '' })
      expect(first!.headers).toMatchObject({ location: '/ok', 'content-length': '0' })
      expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
      expect(rest).toEqual([])
    },
  )

  it('on a stream: a Transfer-Encoding of its own gives way to Node chunking it', async () => {
    const answer = await thenOk('/gzip')
    const [streamed, next] = answer.split(/\r\n0\r\n\r\n/)
    expect(streamed).toMatch(/\r\ntransfer-encoding: chunked\r\n/i)
    expect(streamed).not.toMatch(/gzip/)
    expect(streamed).toMatch(/\r\n\r\n5\r\nhello$/)
    expect(splitAnswers(next!)).toMatchObject([{ status: 200, body: '{"ok":true}' }])
  })

  it('on a stream with a Content-Length: never sent beside it', async () => {
    const [first, second, ...rest] = splitAnswers(await thenOk('/both'))
    expect(first).toMatchObject({ status: 200, body: 'hello' })
    expect(first!.headers['content-length']).toBe('5')
    expect(first!.headers['transfer-encoding']).toBeUndefined()
    expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
    expect(rest).toEqual([])
  })

  it('a Content-Length that is no number on a stream: a 500 JSON error, not a dropped connection', async () => {
    const [first, second] = splitAnswers(await thenOk('/no-number'))
    expect(first!.status).toBe(500)
    expect(JSON.parse(first!.body)).toMatchObject({ code: 500 })
    expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
  })
})
