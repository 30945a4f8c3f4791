/**
 * answerClientError: requests Node's parser refuses get the status Node would send, with fw's JSON
 * error body, and the connection closes; the server keeps serving.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createListener } from '../../../src/runtime/node-adapter.js'
import { answerClientError } from '../../../src/runtime/wire-errors.js'
import { rawExchange } from '../../support/raw-http.js'
import { bootKernel, cleanupTempDirs } from './support.js'

let server: Server
let port: number

beforeAll(async () => {
  const kernel = await bootKernel((r) => {
    r.get('/hello', () => ({ hello: 'world' }))
  })
  server = createServer(
    { maxHeaderSize: 4096 },
    createListener(() => kernel),
  )
  server.on('clientError', answerClientError)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  cleanupTempDirs()
})

/** Status line, headers (lowercase names) and body of a raw HTTP answer. */
function parse(raw: string): { status: string; headers: Record<string, string>; body: string } {
  const [head, body = ''] = raw.split('\r\n\r\n')
  const [status, ...lines] = head!.split('\r\n')
  const headers = Object.fromEntries(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  )
  return { status: status!, headers, body }
}

describe('answerClientError', () => {
  it('answers headers over the size limit with 431 JSON and closes the connection', async () => {
    const raw = await rawExchange(port, [
      'GET /hello HTTP/1.1',
      'Host: localhost',
      `X-Big: ${'a'.repeat(8000)}`,
    ])
    const answer = parse(raw)
    expect(answer.status).toBe('HTTP/1.1 431 Request Header Fields Too Large')
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(answer.headers.connection).toBe('close')
    expect(JSON.parse(answer.body)).toEqual({ error: 'Request Header Fields Too Large', code: 431 })
  })

  it('answers a malformed request with 400 JSON', async () => {
    const answer = parse(
      await rawExchange(port, ['GET /hello HTTP/1.1', 'Host: localhost', 'no colon here']),
    )
    expect(answer.status).toBe('HTTP/1.1 400 Bad Request')
    expect(JSON.parse(answer.body)).toEqual({ error: 'Bad Request', code: 400 })
  })

  it('answers a good request, then the garbage after it with 400 (in order), and keeps serving', async () => {
    const raw = await rawExchange(port, ['GET /hello HTTP/1.1', 'Host: localhost', '', 'GARBAGE'])
    expect(raw).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"hello":"world"\}HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\n\{"error":"Bad Request","code":400\}$/,
    )
    const ok = parse(
      await rawExchange(port, ['GET /hello HTTP/1.1', 'Host: localhost', 'Connection: close']),
    )
    expect(ok.status).toBe('HTTP/1.1 200 OK')
  })
})
