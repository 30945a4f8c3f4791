/**
 * Regression: a malformed request pipelined after a good one whose answer was not written yet
 * (an async guard) replaced that answer: the client got only the 400, read as request 1's. The
 * answers must come in request order (RFC 9112 §9.3.2): request 1's, then the 400, then close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unauthorized } from '../../../src/runtime/http-error.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

// Like the example's bearer check: it answers after a few milliseconds, asynchronously.
const slowGuard: Middleware = async () => {
  await new Promise((resolve) => setTimeout(resolve, 30))
  throw unauthorized()
}

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/me', () => ({ me: true })).withMiddleware(slowGuard)
    r.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30))
      return { slow: true }
    })
    r.get('/hello', () => ({ hello: 'world' }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

const ME = head(['GET /me HTTP/1.1', 'Host: x', 'Authorization: Bearer a.b.c'])

describe('a malformed request pipelined after a good one', () => {
  it('answers the good request first (its 401), then the 400, then closes', async () => {
    const { text, closed } = await exchange(wire.port, `${ME}GARBAGE\r\n\r\n`)
    const answers = splitAnswers(text)
    expect(answers.map((a) => a.status)).toEqual([401, 400])
    expect(answers[1]!.headers.connection).toBe('close')
    expect(JSON.parse(answers[1]!.body)).toEqual({ error: 'Bad Request', code: 400 })
    expect(closed).toBe(true)
  })

  it('waits for every answer queued before it', async () => {
    const slow = head(['GET /slow HTTP/1.1', 'Host: x'])
    const hello = head(['GET /hello HTTP/1.1', 'Host: x'])
    const { text, closed } = await exchange(wire.port, `${slow}${ME}${hello}GARBAGE\r\n\r\n`)
    const answers = splitAnswers(text)
    expect(answers.map((a) => a.status)).toEqual([200, 401, 200, 400])
    expect(JSON.parse(answers[0]!.body)).toEqual({ slow: true })
    expect(JSON.parse(answers[2]!.body)).toEqual({ hello: 'world' })
    expect(closed).toBe(true)
  })

  it('answers a failure inside the body of the request in flight as that request', async () => {
    const bad = head(
      ['POST /hello HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked', 'Content-Type: text/plain'],
      'zz\r\n',
    )
    const { text, closed } = await exchange(wire.port, bad)
    expect(splitAnswers(text).map((a) => a.status)).toEqual([400])
    expect(closed).toBe(true)
  })

  it('writes nothing more when the client leaves before the answer in flight', async () => {
    // The connection closes first: no 400 without its request's answer, and the server lives on.
    const { text } = await exchange(wire.port, `${ME}GARBAGE\r\n\r\n`, { waitMs: 5 })
    expect(text).toBe('')
    await new Promise((resolve) => setTimeout(resolve, 60))
    const after = await exchange(
      wire.port,
      head(['GET /hello HTTP/1.1', 'Host: x', 'Connection: close']),
    )
    expect(splitAnswers(after.text).map((a) => a.status)).toEqual([200])
  })
})
