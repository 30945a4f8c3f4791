/**
 * Regressions found fuzzing the example app at the wire (seventh audit), both about a request
 * Node's parser refuses after others pipelined in the same read:
 * - an unknown method right after a request body (`{"a":1}BREW / HTTP/1.1`) was a 400, not the
 *   501 it gets alone: the line was judged from its start, where the body before it ends;
 * - a request-target over the header size limit after a complete request was a 431, not the
 *   414 it gets alone: the read was judged from its start, the request line before it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire((r) => {
    r.get('/hello', () => ({ hello: 'world' }))
    r.post('/echo', (req: FwRequest) => ({ input: req.input() }))
  })
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

/** The statuses answered to `request` (one TCP write), after which the server must close. */
async function statusesOf(request: string): Promise<number[]> {
  const { text, closed } = await exchange(wire.port, request)
  expect(closed).toBe(true)
  return splitAnswers(text).map((answer) => answer.status)
}

const hello = head(['GET /hello HTTP/1.1', 'Host: x'])
const echo = head(
  ['POST /echo HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 7'],
  '{"a":1}',
)

describe('a refused request pipelined after others in the same read', () => {
  it('is a 501 for an unknown method right after a request body', async () => {
    expect(await statusesOf(echo + head(['BREW /hello HTTP/1.1', 'Host: x']))).toEqual([200, 501])
  })

  it('is a 501 for a lowercase method right after a request body', async () => {
    expect(await statusesOf(echo + head(['get /hello HTTP/1.1', 'Host: x']))).toEqual([200, 501])
  })

  it('is still a 400 for bytes that are no request line after a body', async () => {
    expect(await statusesOf(`${echo}\x16\x03\x01\x02\x00\x01\x00`)).toEqual([200, 400])
  })

  it('is a 414 for a request-target over the header size limit', async () => {
    const long = head([`GET /${'a'.repeat(20_000)} HTTP/1.1`, 'Host: x'])
    expect(await statusesOf(hello + long)).toEqual([200, 414])
  })

  it('is still a 431 for a header field over the header size limit', async () => {
    const big = head(['GET /hello HTTP/1.1', 'Host: x', `X-Big: ${'b'.repeat(20_000)}`])
    expect(await statusesOf(hello + big)).toEqual([200, 431])
  })
})
