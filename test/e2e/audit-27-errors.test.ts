/**
 * Every error a client can get, in the one documented format (DESIGN: "Error bodies are
 * negotiated from Accept: JSON {error, code, request_id?} by default and for application/json;
 * application/problem+json (RFC 9457) and text/plain when asked. Error responses carry
 * Cache-Control: no-store and X-Content-Type-Options: nosniff"): here the requests Node parsed
 * but fw refuses before routing (no Host, an unknown expectation, a transfer coding it cannot
 * frame, CONNECT), answered outside the kernel, against the real `fw serve` of the example app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt } from '../support/project.js'
import { rawExchange } from '../support/raw-http.js'
import { serveApp, type ServedApp } from '../support/server.js'

const ENV = { JWT_SECRET: 'audit-27-errors-secret-of-at-least-32-bytes' }

/** A raw answer split into its status, headers (lowercased names) and body. */
function parse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n')
  const [statusLine, ...fields] = raw.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const field of fields) {
    const colon = field.indexOf(':')
    headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim()
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4) }
}

const ask = async (port: number, lines: string[]) => parse(await rawExchange(port, lines))

let app: ServedApp

describe('errors answered before routing follow the documented format', () => {
  beforeAll(async () => {
    assertBuilt()
    app = await serveApp(['--routes', 'routes.example.ts'], { env: ENV })
  }, 60_000)

  afterAll(async () => {
    await app?.stop()
  })

  it('answers an HTTP/1.1 request without Host in plain text when the client asks for it', async () => {
    const answer = await ask(app.port, [
      'GET /demo/int/1 HTTP/1.1',
      'Accept: text/plain',
      'X-Request-Id: rid-no-host',
    ])
    expect(answer.status).toBe(400)
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(answer.body).toBe('An HTTP/1.1 request needs a Host header\n')
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.headers['x-request-id']).toBe('rid-no-host')
  })

  it('answers an unknown expectation as problem+json, with the request id', async () => {
    const answer = await ask(app.port, [
      'GET /demo/int/1 HTTP/1.1',
      'Host: localhost',
      'Expect: something-else',
      'Accept: application/problem+json',
      'X-Request-Id: rid-expect',
    ])
    expect(answer.status).toBe(417)
    expect(answer.headers['content-type']).toBe('application/problem+json')
    expect(JSON.parse(answer.body)).toEqual({
      type: 'about:blank',
      title: 'Expectation Failed',
      status: 417,
      detail: 'Only the expectation 100-continue is supported',
      instance: '/demo/int/1',
      request_id: 'rid-expect',
    })
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.headers['x-request-id']).toBe('rid-expect')
  })

  it('puts the request id of a refused transfer coding in its JSON body', async () => {
    const answer = await ask(app.port, [
      'POST /demo/echo HTTP/1.1',
      'Host: localhost',
      'Transfer-Encoding: gzip',
      'X-Request-Id: rid-coding',
    ])
    expect(answer.status).toBe(501)
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(answer.body)).toEqual({
      error: 'Transfer-Encoding other than chunked is not supported',
      code: 501,
      request_id: 'rid-coding',
    })
    expect(answer.headers['x-request-id']).toBe('rid-coding')
  })

  it('answers CONNECT in the format the client asks for, with its request id', async () => {
    const answer = await ask(app.port, [
      'CONNECT example.com:443 HTTP/1.1',
      'Host: example.com:443',
      'Accept: text/plain',
      'X-Request-Id: rid-connect',
    ])
    expect(answer.status).toBe(501)
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(answer.body).toBe('Not Implemented\n')
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.headers['x-request-id']).toBe('rid-connect')
  })

  it('keeps the JSON body {error, code} for a refused request that sends no Accept and no id', async () => {
    const answer = await ask(app.port, ['GET /demo/int/1 HTTP/1.1', 'Host: x', 'Expect: nope'])
    expect(answer.status).toBe(417)
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(answer.body)).toEqual({
      error: 'Only the expectation 100-continue is supported',
      code: 417,
    })
    expect(answer.headers['x-request-id']).toBeUndefined()
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
  })

  it('never echoes a malformed X-Request-Id on a refused request', async () => {
    const answer = await ask(app.port, [
      'GET /demo/int/1 HTTP/1.1',
      'Host: x',
      'Expect: nope',
      'X-Request-Id: not a safe id',
    ])
    expect(answer.status).toBe(417)
    expect(JSON.parse(answer.body)).not.toHaveProperty('request_id')
    expect(answer.headers['x-request-id']).toBeUndefined()
  })

  it('sends no body for a refused HEAD request', async () => {
    const raw = await rawExchange(app.port, [
      'HEAD /demo/int/1 HTTP/1.1',
      'Host: x',
      'Expect: nope',
      'Accept: application/problem+json',
    ])
    const answer = parse(raw)
    expect(answer.status).toBe(417)
    expect(answer.headers['content-type']).toBe('application/problem+json')
    expect(answer.body).toBe('')
  })
})
