/**
 * Regression: JSON and urlencoded bodies were decoded as UTF-8 whatever they held: a raw byte
 * 0xE9 became U+FFFD ("caf\uFFFD") and a declared charset (iso-8859-1) was ignored. Bytes that are
 * not UTF-8 are a 400 now, and a charset other than UTF-8 (or US-ASCII) a 415, as body-parser does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import { bodyKind } from '../../../src/runtime/request/content.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { cleanupTempDirs } from '../kernel/support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from '../kernel/wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.post('/echo', (req: FwRequest) => ({ input: req.input() }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** POSTs `body` (bytes as given) with `type` and answers status and parsed body. */
async function post(type: string, body: Buffer): Promise<{ status: number; json: any }> {
  const bytes = Buffer.concat([
    Buffer.from(
      head([
        'POST /echo HTTP/1.1',
        'Host: x',
        `Content-Type: ${type}`,
        `Content-Length: ${body.length}`,
        'Connection: close',
      ]),
      'latin1',
    ),
    body,
  ])
  const [answer] = splitAnswers((await exchange(wire.port, bytes)).text)
  // The answer's bytes arrive as latin1 text: its body is UTF-8.
  return {
    status: answer!.status,
    json: JSON.parse(Buffer.from(answer!.body, 'latin1').toString()),
  }
}

const LATIN1_JSON = Buffer.from('{"a":"caf\xe9"}', 'latin1')

describe('a body that is not valid UTF-8', () => {
  it('is a 400 for JSON, never a replacement character', async () => {
    const answer = await post('application/json', LATIN1_JSON)
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ error: 'Request body is not valid UTF-8', code: 400 })
  })

  it('is a 400 for a urlencoded form', async () => {
    const answer = await post(
      'application/x-www-form-urlencoded',
      Buffer.from('a=caf\xe9', 'latin1'),
    )
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ error: 'Request body is not valid UTF-8' })
  })

  it('leaves valid UTF-8 as it was', async () => {
    const answer = await post('application/json', Buffer.from('{"a":"café \u{1F600}"}'))
    expect(answer).toEqual({ status: 200, json: { input: { a: 'café \u{1F600}' } } })
  })
})

describe('a declared charset', () => {
  it.each([
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded; charset=windows-1252',
    'application/vnd.api+json; charset="latin1"',
  ])('other than UTF-8 is a 415: %s', async (type) => {
    const answer = await post(type, Buffer.from('{"a":1}'))
    expect(answer.status).toBe(415)
    expect(answer.json).toMatchObject({ code: 415 })
  })

  it.each([
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json; CHARSET=utf8',
    'application/json; charset=us-ascii',
  ])('of UTF-8 or US-ASCII is read: %s', async (type) => {
    expect(await post(type, Buffer.from('{"a":1}'))).toEqual({
      status: 200,
      json: { input: { a: 1 } },
    })
  })

  it('does not concern multipart, whose parts carry their own', () => {
    expect(bodyKind('multipart/form-data; charset=iso-8859-1; boundary=x')).toBe('multipart')
  })

  it('makes the parsed body of a request made in process throw the 415 too', () => {
    const request = FwRequest.create({
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      body: '{"a":1}',
    })
    expect(() => request.input()).toThrow(HttpError)
    try {
      request.input()
    } catch (error) {
      expect((error as HttpError).status).toBe(415)
    }
  })
})
