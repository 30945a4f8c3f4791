/**
 * Regression: `Transfer-Encoding: gzip, chunked` was accepted and the gzip bytes read as the
 * body. A transfer coding other than chunked is a 501 before the body is read (RFC 9112 §6.1),
 * and the connection closes: its framing is not understood.
 */
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer
let handled = 0

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.post('/echo', (req: FwRequest) => {
      handled++
      return { content: req.getContent() }
    })
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

function chunked(body: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`${body.length.toString(16)}\r\n`),
    body,
    Buffer.from('\r\n0\r\n\r\n'),
  ])
}

describe('a transfer coding other than chunked', () => {
  it.each(['gzip, chunked', 'GZIP,chunked', 'x-custom , chunked'])(
    'is a 501 JSON error before the body is read: %s',
    async (coding) => {
      const body = chunked(gzipSync('{"a":1}'))
      const request = Buffer.concat([
        Buffer.from(
          head([
            'POST /echo HTTP/1.1',
            'Host: x',
            'Content-Type: application/json',
            `Transfer-Encoding: ${coding}`,
          ]),
        ),
        body,
      ])
      const before = handled
      const { text, closed } = await exchange(wire.port, request)
      const answers = splitAnswers(text)
      expect(answers.map((a) => a.status)).toEqual([501])
      expect(answers[0]!.headers.connection).toBe('close')
      expect(answers[0]!.headers['x-content-type-options']).toBe('nosniff')
      expect(JSON.parse(answers[0]!.body)).toMatchObject({ code: 501 })
      expect(closed).toBe(true)
      expect(handled).toBe(before)
    },
  )

  it('is checked over every Transfer-Encoding line', async () => {
    const request = head([
      'POST /echo HTTP/1.1',
      'Host: x',
      'Transfer-Encoding: gzip',
      'Transfer-Encoding: chunked',
    ])
    const { text } = await exchange(wire.port, `${request}0\r\n\r\n`)
    expect(splitAnswers(text).map((a) => a.status)).toEqual([501])
  })

  it('leaves chunked alone', async () => {
    const request = head([
      'POST /echo HTTP/1.1',
      'Host: x',
      'Transfer-Encoding: chunked',
      'Connection: close',
    ])
    const { text } = await exchange(
      wire.port,
      Buffer.concat([Buffer.from(request), chunked(Buffer.from('hi'))]),
    )
    const [answer] = splitAnswers(text)
    expect(answer!.status).toBe(200)
    expect(JSON.parse(answer!.body)).toEqual({ content: 'hi' })
  })
})
