/**
 * Regression: a request-target too long for the header size limit got 431; RFC 9112 §3 says 414
 * (URI Too Long). Fields over the limit stay a 431.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/hello', () => ({ hello: 'world' }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

async function statusOf(chunks: string[] | string): Promise<number[]> {
  const { text, closed } = await exchange(wire.port, chunks)
  expect(closed).toBe(true)
  return splitAnswers(text).map((a) => a.status)
}

describe('a request over the header size limit (16 KiB)', () => {
  it('is a 414 when the request-target alone is over it', async () => {
    expect(await statusOf(head([`GET /${'a'.repeat(20_000)} HTTP/1.1`, 'Host: x']))).toEqual([414])
  })

  it('is a 414 when the request-target is most of it', async () => {
    const request = head([
      `GET /${'a'.repeat(15_000)} HTTP/1.1`,
      'Host: x',
      `X: ${'b'.repeat(3000)}`,
    ])
    expect(await statusOf(request)).toEqual([414])
  })

  it('is a 414 when the request-target arrives in several writes', async () => {
    const chunks = [
      `GET /${'a'.repeat(6000)}`,
      'a'.repeat(6000),
      'a'.repeat(6000),
      ' HTTP/1.1\r\n\r\n',
    ]
    expect(await statusOf(chunks)).toEqual([414])
  })

  it('is a 431 when a header field is over it', async () => {
    const request = head(['GET /hello HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`])
    expect(await statusOf(request)).toEqual([431])
  })

  it('is a 431 when a long Cookie arrives in several writes', async () => {
    // About 21 KB of cookies, sent 5000 bytes at a time: a read without a line end, as a long
    // request-target's, but with the spaces of "; ".
    const cookies = Array.from({ length: 1400 }, (_, i) => `c${i}=${'v'.repeat(10)}`).join('; ')
    const chunks = ['GET /hello HTTP/1.1\r\nHost: x\r\nCookie: ']
    for (let at = 0; at < cookies.length; at += 5000) chunks.push(cookies.slice(at, at + 5000))
    chunks.push('\r\n\r\n')
    expect(await statusOf(chunks)).toEqual([431])
  })
})
