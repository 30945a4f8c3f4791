/**
 * Request input audit (session 16), over real HTTP through the kernel.
 * - A multipart text field was decoded as UTF-8 with U+FFFD for bytes that are not, where JSON and
 *   urlencoded bodies answer 400; now it is the same 400.
 * - A multipart field declaring a charset busboy does not know (`charset=shift_jis`) reached the
 *   parser with no value and threw outside any request: one request stopped `fw serve`. Now 415.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
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

/** POSTs `body` (bytes as given) with `type`; answers status and parsed JSON body. */
async function post(type: string, body: Buffer): Promise<{ status: number; json: any }> {
  const lines = ['POST /echo HTTP/1.1', 'Host: x', `Content-Type: ${type}`]
  lines.push(`Content-Length: ${body.length}`, 'Connection: close')
  const bytes = Buffer.concat([Buffer.from(head(lines), 'latin1'), body])
  const [answer] = splitAnswers((await exchange(wire.port, bytes)).text)
  return {
    status: answer!.status,
    json: JSON.parse(Buffer.from(answer!.body, 'latin1').toString()),
  }
}

/** A multipart body of one field `a` holding `value`, with the part's extra header lines. */
function multipart(value: Buffer, ...headers: string[]): Buffer {
  const disposition = ['Content-Disposition: form-data; name="a"', ...headers].join('\r\n')
  return Buffer.concat([
    Buffer.from(`--b\r\n${disposition}\r\n\r\n`, 'latin1'),
    value,
    Buffer.from('\r\n--b--\r\n', 'latin1'),
  ])
}

const MULTIPART = 'multipart/form-data; boundary=b'

describe('a multipart text field that is not valid UTF-8', () => {
  it('is a 400, as a JSON or urlencoded body is, never a replacement character', async () => {
    const answer = await post(MULTIPART, multipart(Buffer.from('caf\xe9', 'latin1')))
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ error: 'Request body is not valid UTF-8', code: 400 })
  })

  it('leaves valid UTF-8 as it was, a U+FFFD sent as EF BF BD included', async () => {
    const answer = await post(MULTIPART, multipart(Buffer.from('café \uFFFD \u{1F600}')))
    expect(answer).toEqual({ status: 200, json: { input: { a: 'café \uFFFD \u{1F600}' } } })
  })

  it('reads a field by the charset it declares', async () => {
    const latin1 = multipart(
      Buffer.from('caf\xe9', 'latin1'),
      'Content-Type: text/plain; charset=iso-8859-1',
    )
    expect(await post(MULTIPART, latin1)).toEqual({ status: 200, json: { input: { a: 'café' } } })
    const utf8 = multipart(Buffer.from('café'), 'Content-Type: text/plain; charset=UTF-8')
    expect(await post(MULTIPART, utf8)).toEqual({ status: 200, json: { input: { a: 'café' } } })
  })
})

describe('a multipart field declaring a charset fw cannot read', () => {
  it('is a 415 JSON error, and the server keeps serving', async () => {
    for (const charset of ['shift_jis', 'utf-16be', 'x-unknown']) {
      const body = multipart(Buffer.from('abc'), `Content-Type: text/plain; charset=${charset}`)
      const answer = await post(MULTIPART, body)
      expect(answer.status).toBe(415)
      expect(answer.json).toMatchObject({ error: 'Unsupported charset', code: 415 })
    }
    expect(await post(MULTIPART, multipart(Buffer.from('abc')))).toEqual({
      status: 200,
      json: { input: { a: 'abc' } },
    })
  })
})

describe('a urlencoded body whose percent escapes are not UTF-8', () => {
  const FORM = 'application/x-www-form-urlencoded'

  it('is a 400, as raw bytes that are not UTF-8 are', async () => {
    for (const body of ['a=caf%E9', 'caf%E9=1', 'a=%ZZ%E9', 'a[caf%E9]=1']) {
      const answer = await post(FORM, Buffer.from(body))
      expect(answer.status).toBe(400)
      expect(answer.json).toMatchObject({ error: 'Request body is not valid UTF-8', code: 400 })
    }
  })

  it('keeps malformed escapes as they are and decodes valid ones, U+FFFD included', async () => {
    const answer = await post(FORM, Buffer.from('a=%ZZ%C3%A9&b=%EF%BF%BD+%2B&c=100%'))
    expect(answer).toEqual({
      status: 200,
      json: { input: { a: '%ZZé', b: '\uFFFD +', c: '100%' } },
    })
  })
})
