/**
 * Regression: CONNECT got no answer at all (0 bytes, then the connection closed): Node emits
 * 'connect' and nobody listened. fw is no proxy: a JSON 501 (RFC 9110 §9.1), then close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30))
      return { slow: true }
    })
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

describe('CONNECT', () => {
  it('is a 501 JSON error, then the connection closes', async () => {
    const { text, closed } = await exchange(
      wire.port,
      head(['CONNECT x:443 HTTP/1.1', 'Host: x:443']),
    )
    const answers = splitAnswers(text)
    expect(answers.map((a) => a.status)).toEqual([501])
    expect(answers[0]!.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(answers[0]!.headers['x-content-type-options']).toBe('nosniff')
    expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'Not Implemented', code: 501 })
    expect(closed).toBe(true)
  })

  it('comes after the answer to a request pipelined before it', async () => {
    const request = `${head(['GET /slow HTTP/1.1', 'Host: x'])}${head(['CONNECT x:443 HTTP/1.1', 'Host: x:443'])}`
    const { text, closed } = await exchange(wire.port, request)
    expect(splitAnswers(text).map((a) => a.status)).toEqual([200, 501])
    expect(closed).toBe(true)
  })
})
