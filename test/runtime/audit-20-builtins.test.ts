/**
 * Audit 20 of the built-in request context over real HTTP, as a hostile client sends it: the
 * production HTTPS redirect never leaves the host the request named (a `//evil.com` path, an
 * untrusted peer's X-Forwarded-Host), W3C traceparent rules, and request ids sent twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { rawExchange } from '../support/raw-http.js'
import { bootKernel, cleanupTempDirs, serve, type Register, type Served } from './kernel/support.js'

const routes: Register = (r) => {
  r.get('/attributes', (request: FwRequest) => ({
    client_ip: request.getAttribute('client_ip'),
    request_id: request.getAttribute('request_id'),
    trace_id: request.getAttribute('trace.trace_id'),
  }))
  r.get('/negotiate', (request: FwRequest) => ({ type: request.getAttribute('negotiated.type') }), {
    middleware: ['negotiate'],
  })
}

let trusting: Served // production, loopback trusted (the default)
let distrusting: Served // production, no peer trusted
let development: Served

beforeAll(async () => {
  trusting = await serve(await bootKernel(routes, { env: 'production', signingKeys: ['k'] }))
  distrusting = await serve(
    await bootKernel(routes, {
      env: 'production',
      signingKeys: ['k'],
      request: { trustProxy: () => false },
    }),
  )
  development = await serve(await bootKernel(routes))
})

afterAll(async () => {
  await Promise.all([trusting.close(), distrusting.close(), development.close()])
  cleanupTempDirs()
})

/** The status and Location of a raw request to `server`. */
async function redirectOf(server: Served, lines: string[]): Promise<[number, string | null]> {
  const head = (await rawExchange(server.port, lines)).split('\r\n\r\n')[0]!
  const status = Number(head.split(' ')[1])
  return [status, /^location: (.*)$/im.exec(head)?.[1] ?? null]
}

describe('the production HTTPS redirect of a hostile request', () => {
  it('keeps a path that starts with // on the same host (no open redirect)', async () => {
    expect(
      await redirectOf(trusting, ['GET //evil.com/x?a=1 HTTP/1.1', 'Host: shop.example.com']),
    ).toEqual([301, 'https://shop.example.com//evil.com/x?a=1'])
    expect(
      await redirectOf(trusting, ['GET /\\evil.com HTTP/1.1', 'Host: shop.example.com']),
    ).toEqual([301, 'https://shop.example.com/%5Cevil.com'])
  })

  it('ignores X-Forwarded-Host, -Proto and -Port from an untrusted peer, in any case', async () => {
    const lines = [
      'GET /x HTTP/1.1',
      'Host: shop.example.com',
      'x-FORWARDED-host: evil.com',
      'X-Forwarded-Proto: HTTPS',
      'X-Forwarded-Port: 8443',
    ]
    expect(await redirectOf(distrusting, lines)).toEqual([301, 'https://shop.example.com/x'])
  })

  it('keeps encoded CR/LF encoded, and writes an IPv6 host in brackets without its port', async () => {
    expect(
      await redirectOf(trusting, ['GET /a%0d%0aSet-Cookie:x=1 HTTP/1.1', 'Host: shop.example.com']),
    ).toEqual([301, 'https://shop.example.com/a%0d%0aSet-Cookie:x=1'])
    expect(await redirectOf(trusting, ['GET /x HTTP/1.1', 'Host: [::1]:8080'])).toEqual([
      301,
      'https://[::1]/x',
    ])
  })

  it('reads the last X-Forwarded-Proto and -Host, as the trusted proxy nearest fw set them', async () => {
    const forwarded = (proto: string, more: string[] = []) =>
      redirectOf(trusting, [
        'GET /attributes HTTP/1.1',
        'Host: a.test',
        `X-Forwarded-Proto: ${proto}`,
        ...more,
      ])
    expect((await forwarded('HTTPS'))[0]).toBe(200)
    expect((await forwarded('http, https'))[0]).toBe(200)
    expect(await forwarded('https, http')).toEqual([301, 'https://a.test/attributes'])
    // Two trusted hops in X-Forwarded-For do not make an earlier value count: an outer proxy that
    // passes the client's own X-Forwarded-Proto on (and appends only to X-Forwarded-For) would
    // let the client choose it, dodging the production redirect, or the host of absolute URLs.
    const chain = ['X-Forwarded-For: 203.0.113.9, 127.0.0.2']
    expect((await forwarded('https, http', chain))[0]).toBe(301)
    expect(
      await forwarded('http', [...chain, 'X-Forwarded-Host: evil.example, shop.example']),
    ).toEqual([301, 'https://shop.example/attributes'])
  })
})

describe('the request context from hostile headers', () => {
  const attributes = async (headers: Record<string, string>) => {
    const reply = await development.send('GET', '/attributes', { headers })
    return { ...JSON.parse(reply.text), echoed: reply.headers['x-request-id'] }
  }
  const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

  it('refuses every invalid traceparent the W3C test suite sends', async () => {
    const invalid = [
      VALID.toUpperCase(),
      `ff${VALID.slice(2)}`,
      `${VALID}-`,
      `${VALID.slice(0, -2)}0g`,
      `${VALID.slice(0, 36)}0000000000000000-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `cc${VALID.slice(2)}.future`,
      `${VALID}, ${VALID}`,
    ]
    for (const traceparent of invalid) {
      const { trace_id } = await attributes({ traceparent })
      expect([traceparent, trace_id]).toEqual([
        traceparent,
        expect.stringMatching(/^[0-9a-f]{32}$/),
      ])
      expect(trace_id).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    }
    expect((await attributes({ traceparent: `cc${VALID.slice(2)}-future` })).trace_id).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    )
  })

  it('replaces an X-Request-Id sent twice, and echoes the id it uses', async () => {
    const reply = await rawExchange(development.port, [
      'GET /attributes HTTP/1.1',
      'Host: a.test',
      'Connection: close',
      'X-Request-Id: abc',
      'x-request-id: def',
    ])
    const id = /^x-request-id: (.*)$/im.exec(reply)?.[1]
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(reply).toContain(`"request_id":"${id}"`)
  })

  it('reads X-Forwarded-For right to left from loopback, however the entries are written', async () => {
    const ip = async (xff: string) => (await attributes({ 'x-forwarded-for': xff })).client_ip
    expect(await ip('9.9.9.9, 1.2.3.4, ::ffff:127.0.0.1')).toBe('1.2.3.4')
    expect(await ip('::FFFF:1.2.3.4')).toBe('1.2.3.4')
    expect(await ip('1.2.3.4, 10.0.0.1')).toBe('10.0.0.1')
    expect(await ip('1.2.3.4, unknown')).toBe('127.0.0.1')
    expect(await ip('5.6.7.8, [2001:db8::1]:4711')).toBe('2001:db8::1')
  })

  it('negotiates the type of a range with parameters (`application/json; charset=utf-8`)', async () => {
    const type = async (accept: string) =>
      JSON.parse((await development.send('GET', '/negotiate', { headers: { accept } })).text).type
    expect(await type('application/json; charset=utf-8')).toBe('application/json')
    expect(await type('text/html;level=1;q=0.5, text/plain;format=flowed;q=0.9')).toBe('text/plain')
    // The weight still counts, parameters or not: q=0 refuses.
    expect(await type('application/json; charset=utf-8; q=0')).toBe(null)
    expect(await type('image/png; q=1')).toBe(null)
  })
})
