/**
 * Audit 26, what caches between fw and its clients see:
 * - the production HTTPS redirect depends on X-Forwarded-Proto and -Host, which the URL does not
 *   show: no shared cache may keep it (one behind the TLS proxy gave the 301 to https requests,
 *   each sent to itself; one before a proxy passing the client's X-Forwarded-Host on served every
 *   client the host one named), Vary says so, and browsers keep it an hour, not for ever;
 * - the answers written on the socket for requests Node's parser refused carry a Date, as every
 *   4xx must (RFC 9110 §6.6.1);
 * - `json(…, 304)` and `create(…, 304)` imply no Content-Type: a cache puts a 304's fields on the
 *   response it stored (RFC 9111 §4.3.4), so the implied type replaced the stored one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { create, json } from '../../src/runtime/response.js'
import { cleanupTempDirs } from './kernel/support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './kernel/wire.js'

let production: WireServer
let development: WireServer

beforeAll(async () => {
  production = await serveWire(
    (r) => {
      r.get('/account', () => ({ ok: true }))
    },
    { env: 'production', signingKeys: ['prod-key'] },
  )
  development = await serveWire((r) => {
    r.get('/page', () => json(null, 304, { etag: '"v1"' }))
    r.get('/text', () => create('', 304, { etag: '"v1"' }))
  })
})

afterAll(async () => {
  await production.close()
  await development.close()
  cleanupTempDirs()
})

describe('the production HTTPS redirect', () => {
  it('is private, varies on the forwarded headers and has a bounded lifetime', async () => {
    const request = head(['GET /account?tab=1 HTTP/1.1', 'Host: localhost', 'Connection: close'])
    const [answer] = splitAnswers((await exchange(production.port, request)).text)
    expect(answer!.status).toBe(301)
    expect(answer!.headers.location).toBe('https://localhost/account?tab=1')
    expect(answer!.headers.vary).toBe('X-Forwarded-Proto, X-Forwarded-Host')
    expect(answer!.headers['cache-control']).toMatch(/^private, max-age=\d+$/)
  })

  it('keeps the headers when a trusted proxy names the host', async () => {
    const request = head([
      'GET /account HTTP/1.1',
      'Host: localhost',
      'X-Forwarded-Host: shop.example',
      'Connection: close',
    ])
    const [answer] = splitAnswers((await exchange(production.port, request)).text)
    expect(answer!.headers.location).toBe('https://shop.example/account')
    expect(answer!.headers['cache-control']).toMatch(/^private/)
  })
})

describe('answers to requests the parser refused', () => {
  it.each([
    ['a malformed header', head(['GET /page HTTP/1.1', 'Host localhost'])],
    ['an unknown method', head(['BREW /page HTTP/1.1', 'Host: localhost'])],
  ])('carry a Date (%s)', async (_name, request) => {
    const [answer] = splitAnswers((await exchange(development.port, request)).text)
    expect(answer!.status).toBeGreaterThanOrEqual(400)
    expect(Number.isNaN(Date.parse(answer!.headers.date ?? ''))).toBe(false)
  })
})

describe('a 304 made with json() or create()', () => {
  it.each(['/page', '/text'])('states no Content-Type of its own (%s)', async (path) => {
    const request = head([`GET ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close'])
    const [answer] = splitAnswers((await exchange(development.port, request)).text)
    expect(answer!.status).toBe(304)
    expect(answer!.headers.etag).toBe('"v1"')
    expect(answer!.headers['content-type']).toBeUndefined()
    expect(answer!.headers['content-length']).toBeUndefined()
  })

  it('keeps a type the caller gives', () => {
    expect(json(null, 304, { 'content-type': 'text/html' }).header('content-type')).toBe(
      'text/html',
    )
    expect(json(null).header('content-type')).toBe('application/json; charset=utf-8')
  })
})
