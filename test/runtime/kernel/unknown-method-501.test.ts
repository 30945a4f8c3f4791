/**
 * Regression: an unknown or lowercase method (`BREW /x`, `get /x`) got 400; RFC 9110 §9.1 says an
 * origin server SHOULD answer a method it does not recognise with 501 (Not Implemented). Bytes
 * that are no request line at all stay a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/x', () => ({ x: true }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

describe('a request line Node does not know the method of', () => {
  it.each(['BREW /x HTTP/1.1', 'get /x HTTP/1.1', 'GETT /x HTTP/1.1', 'PROPFINDX * HTTP/1.1'])(
    'is a 501 JSON error: %s',
    async (line) => {
      const { text, closed } = await exchange(wire.port, head([line, 'Host: x']))
      const answers = splitAnswers(text)
      expect(answers.map((a) => a.status)).toEqual([501])
      expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'Not Implemented', code: 501 })
      expect(answers[0]!.headers['x-content-type-options']).toBe('nosniff')
      expect(closed).toBe(true)
    },
  )

  it('is a 501 after the answer to a good request before it', async () => {
    const request = `${head(['GET /x HTTP/1.1', 'Host: x'])}${head(['BREW /x HTTP/1.1', 'Host: x'])}`
    const { text } = await exchange(wire.port, request)
    expect(splitAnswers(text).map((a) => a.status)).toEqual([200, 501])
  })

  it.each(['GARBAGE', 'GA RBAGE\tx', '\u0001\u0002 /x HTTP/1.1'])(
    'is a 400 when it is no request line: %j',
    async (line) => {
      const { text } = await exchange(wire.port, head([line]))
      expect(splitAnswers(text).map((a) => a.status)).toEqual([400])
    },
  )
})
