/**
 * A string or byte body is framed by fw: its Content-Length is the body's own, whatever framing
 * header the handler gave (headers copied from a proxied upstream response, say). A caller's
 * Content-Length used to go out with a body of another length, so the client read the excess as
 * the next response (response splitting), and a caller's Transfer-Encoding went out beside fw's
 * Content-Length.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { create, FwResponse, json } from '../../../src/runtime/response.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/ok', () => ({ ok: true }))
    r.get('/constructed', () => new FwResponse(200, { 'Content-Length': '2' }, 'abcdefgh'))
    r.get('/bytes', () => create(Buffer.from('abcdefgh'), 200, { 'content-length': '20' }))
    r.get('/chunked', () => create('abcdefgh', 200, { 'Transfer-Encoding': 'chunked' }))
    r.get('/json', () => json({ a: 1 }, 200, { 'content-length': '1', 'transfer-encoding': 'x' }))
    r.get('/with-header', () => create('abcdefgh').withHeader('Content-Length', '2'))
    r.get('/with-headers', () => create('abcdefgh').withHeaders({ 'content-length': '2' }))
    r.get('/json-with-header', () => json({ a: 1 }).withHeader('content-length', '100'))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** The answers to GET `path` and then GET /ok, pipelined on one connection. */
async function thenOk(path: string) {
  const answer = await exchange(
    wire.port,
    head([`GET ${path} HTTP/1.1`, 'Host: x']) +
      head(['GET /ok HTTP/1.1', 'Host: x', 'Connection: close']),
  )
  return splitAnswers(answer.text)
}

describe("a handler's framing headers on a string or byte body", () => {
  it.each([
    ['/constructed', 'abcdefgh'],
    ['/bytes', 'abcdefgh'],
    ['/with-header', 'abcdefgh'],
    ['/with-headers', 'abcdefgh'],
    ['/json', '{"a":1}'],
    ['/json-with-header', '{"a":1}'],
  ])(
    'give way to the length of the body (%s), and the next answer stays in step',
    async (path, body) => {
      const [first, second, ...rest] = await thenOk(path)
      expect(first).toMatchObject({ status: 200, body })
      expect(first!.headers['content-length']).toBe(String(body.length))
      expect(first!.headers['transfer-encoding']).toBeUndefined()
      expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
      expect(rest).toEqual([])
    },
  )

  it('never send a Transfer-Encoding beside the Content-Length', async () => {
    const [first, second] = await thenOk('/chunked')
    expect(first!.headers).toMatchObject({ 'content-length': '8' })
    expect(first!.headers['transfer-encoding']).toBeUndefined()
    expect(first!.body).toBe('abcdefgh')
    expect(second).toMatchObject({ status: 200, body: '{"ok":true}' })
  })

  it('are what the response object reports too', () => {
    expect(new FwResponse(200, { 'Content-Length': '2' }, 'abc').header('content-length')).toBe(
      undefined,
    )
    expect(json({}, 200, { 'content-length': '9' }).header('content-length')).toBe('2')
    const text = create('abc')
    expect(text.withHeader('content-length', '9')).toBe(text)
  })
})
