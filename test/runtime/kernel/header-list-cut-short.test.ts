/**
 * Regression: Node keeps only so many header fields (maxHeadersCount) and drops the rest without
 * a word: a JSON body lost its Content-Type and reached the handler as `{}`, and a second Host
 * after the cut escaped the two-Host 400. A list cut short is a 431 now, before routing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { cleanupTempDirs, type Register } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

const routes: Register = (r) => {
  r.post('/echo', (req: FwRequest) => ({ input: req.input() }))
  r.get('/host', (req: FwRequest) => ({ host: req.getHost() }))
}

const filler = (count: number): string[] => Array.from({ length: count }, () => 'a:1')

let wire: WireServer
let small: WireServer

beforeAll(async () => {
  wire = await serveWire(routes)
  small = await serveWire(routes, {}, (server) => (server.maxHeadersCount = 10))
})

afterAll(async () => {
  await wire.close()
  await small.close()
  cleanupTempDirs()
})

describe('a header list longer than Node keeps', () => {
  it('is a 431 JSON error, not a body silently lost', async () => {
    const request = head(
      [
        'POST /echo HTTP/1.1',
        'Host: x',
        ...filler(2100),
        'Content-Type: application/json',
        'Content-Length: 7',
      ],
      '{"a":1}',
    )
    const { text, closed } = await exchange(wire.port, request)
    const [answer, ...more] = splitAnswers(text)
    expect(more).toEqual([])
    expect(answer!.status).toBe(431)
    expect(JSON.parse(answer!.body)).toMatchObject({ code: 431 })
    expect(answer!.headers['x-content-type-options']).toBe('nosniff')
    expect(answer!.headers['cache-control']).toBe('no-store')
    expect(answer!.headers.connection).toBe('close')
    expect(closed).toBe(true)
  })

  it('is a 431, not a second Host slipping past the two-Host check', async () => {
    const request = head(['GET /host HTTP/1.1', 'Host: x', ...filler(2100), 'Host: evil'])
    const { text } = await exchange(wire.port, request)
    expect(splitAnswers(text).map((a) => a.status)).toEqual([431])
  })

  it("follows the server's own maxHeadersCount", async () => {
    const cut = await exchange(small.port, head(['GET /host HTTP/1.1', 'Host: x', ...filler(12)]))
    expect(splitAnswers(cut.text).map((a) => a.status)).toEqual([431])
    const kept = head(['GET /host HTTP/1.1', 'Host: x', ...filler(5), 'Connection: close'])
    const answers = splitAnswers((await exchange(small.port, kept)).text)
    expect(answers.map((a) => a.status)).toEqual([200])
  })

  it('lets a long list that Node kept whole through', async () => {
    const request = head(
      [
        'POST /echo HTTP/1.1',
        'Host: x',
        ...filler(900),
        'Content-Type: application/json',
        'Content-Length: 7',
        'Connection: close',
      ],
      '{"a":1}',
    )
    const [answer] = splitAnswers((await exchange(wire.port, request)).text)
    expect(answer!.status).toBe(200)
    expect(JSON.parse(answer!.body)).toEqual({ input: { a: 1 } })
  })
})
