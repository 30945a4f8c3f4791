/**
 * The built-in middleware: request id, W3C trace id, client IP through trusted proxies only
 * (DESIGN "Proxies"), and the `negotiate` alias.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../../src/runtime/kernel.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { newRequestId } from '../../../src/runtime/middleware/request-id.js'
import { formatUuids } from '../../../src/runtime/middleware/random-ids.js'
import { bootKernel, call, cleanupTempDirs, jsonOf, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/attributes', (request: FwRequest) => ({
    client_ip: request.getAttribute('client_ip'),
    request_id: request.getAttribute('request_id'),
    trace_id: request.getAttribute('trace.trace_id'),
  }))
  r.get(
    '/negotiate',
    (request: FwRequest) => ({
      type: request.getAttribute('negotiated.type'),
      charset: request.getAttribute('negotiated.charset'),
      locale: request.getAttribute('locale'),
    }),
    { middleware: ['negotiate'] },
  )
  r.get('/negotiate-listed', (request: FwRequest) => ({ locale: request.getAttribute('locale') }), {
    middleware: ['negotiate:en,fr'],
  })
  r.get('/plain', (request: FwRequest) => ({
    type: request.getAttribute('negotiated.type', 'unset'),
  }))
}

let kernel: Kernel

beforeAll(async () => {
  kernel = await bootKernel(routes)
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function attributes(
  init: Parameters<typeof call>[1],
): Promise<{ body: any; requestIdHeader: string | undefined }> {
  const response = await call(kernel, init)
  return { body: await jsonOf(response), requestIdHeader: response.header('x-request-id') }
}

describe('request id', () => {
  it('keeps a well-formed incoming X-Request-Id and echoes it', async () => {
    for (const id of ['abc-123', 'req_1.2:3', 'x'.repeat(128)]) {
      const { body, requestIdHeader } = await attributes({
        uri: '/attributes',
        headers: { 'x-request-id': id },
      })
      expect(body.request_id).toBe(id)
      expect(requestIdHeader).toBe(id)
    }
  })

  it('replaces a missing, too long or unsafe id with a fresh UUID, and echoes that', async () => {
    const seen = new Set<string>()
    for (const headers of [
      {},
      { 'x-request-id': 'x'.repeat(129) },
      { 'x-request-id': 'has space' },
      { 'x-request-id': '<script>' },
      { 'x-request-id': '' },
    ]) {
      const { body, requestIdHeader } = await attributes({ uri: '/attributes', headers })
      expect(body.request_id).toMatch(UUID)
      expect(requestIdHeader).toBe(body.request_id)
      seen.add(body.request_id)
    }
    expect(seen.size).toBe(5)
  })

  it('generates version 4 UUIDs that do not repeat, across batches', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId())
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('writes each random byte as its two hex digits, in the 8-4-4-4-12 layout', () => {
    const random = Buffer.alloc(16 * 1024)
    for (let i = 0; i < random.length; i++) random[i] = (i % 16) * 17 // 00, 11, 22, ... ff
    const ids = formatUuids(random)
    expect(ids.length).toBe(36 * 1024)
    // Byte 6 keeps its low nibble under version 4; byte 8 its low 6 bits under the variant.
    expect(ids.slice(0, 36)).toBe('00112233-4455-4677-8899-aabbccddeeff')
    expect(ids.slice(-36)).toBe('00112233-4455-4677-8899-aabbccddeeff')
  })

  it('echoes the id on error responses and puts it in the error body', async () => {
    const response = await call(kernel, { uri: '/nope', headers: { 'x-request-id': 'trace-me' } })
    expect(response.status).toBe(404)
    expect(response.header('x-request-id')).toBe('trace-me')
    expect((await jsonOf(response)).request_id).toBe('trace-me')
  })
})

describe('trace id', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'

  it('takes the trace id of a valid traceparent', async () => {
    const { body } = await attributes({
      uri: '/attributes',
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    })
    expect(body.trace_id).toBe(traceId)
  })

  it('reads a later version of traceparent by version 00 rules, fields it appends included', async () => {
    for (const traceparent of [
      `01-${traceId}-00f067aa0ba902b7-01`,
      `cc-${traceId}-00f067aa0ba902b7-09-what-comes-next`,
    ]) {
      const { body } = await attributes({ uri: '/attributes', headers: { traceparent } })
      expect(body.trace_id).toBe(traceId)
    }
  })

  it('starts a fresh random 32-hex trace id for an all-zero or malformed traceparent', async () => {
    const bad = [
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`,
      `00-${traceId.slice(1)}-00f067aa0ba902b7-01`,
      `00-${traceId}-00f067aa0ba902b7-01-more`, // version 00 has exactly four fields
      `ff-${traceId}-00f067aa0ba902b7-01`, // version ff is invalid
      `01-${traceId}-00f067aa0ba902b7-01x`, // what follows the flags must start with '-'
      'not a traceparent',
      '',
    ]
    const seen = new Set<string>()
    for (const traceparent of bad) {
      const { body } = await attributes({
        uri: '/attributes',
        headers: traceparent ? { traceparent } : {},
      })
      expect(body.trace_id).toMatch(/^[0-9a-f]{32}$/)
      expect(body.trace_id).not.toBe(traceId)
      expect(body.trace_id).not.toBe('0'.repeat(32))
      seen.add(body.trace_id)
    }
    expect(seen.size).toBe(bad.length)
  })
})

describe('client ip', () => {
  it('uses the socket peer when there is no X-Forwarded-For', async () => {
    const { body } = await attributes({
      uri: '/attributes',
      server: { REMOTE_ADDR: '203.0.113.5' },
    })
    expect(body.client_ip).toBe('203.0.113.5')
  })

  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const { body } = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '198.51.100.7' },
      server: { REMOTE_ADDR: '203.0.113.5' },
    })
    expect(body.client_ip).toBe('203.0.113.5')
  })

  it('honours X-Forwarded-For from a trusted (loopback) peer, read right to left through trusted hops only', async () => {
    const direct = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '198.51.100.7' },
      server: { REMOTE_ADDR: '127.0.0.1' },
    })
    expect(direct.body.client_ip).toBe('198.51.100.7')
    const chain = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '198.51.100.7, 127.0.0.1' },
    })
    expect(chain.body.client_ip).toBe('198.51.100.7')
    // 10.0.0.1 is not a trusted proxy: what it claims (the spoofable left part) is not believed.
    const spoofed = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '6.6.6.6, 10.0.0.1' },
    })
    expect(spoofed.body.client_ip).toBe('10.0.0.1')
  })

  it('never takes an X-Forwarded-For entry that is not an IP address as the client', async () => {
    const garbage = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '<script>' },
      server: { REMOTE_ADDR: '127.0.0.1' },
    })
    expect(garbage.body.client_ip).toBe('127.0.0.1')
    const behindHop = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': 'unknown, 127.0.0.2' },
      server: { REMOTE_ADDR: '127.0.0.1' },
    })
    expect(behindHop.body.client_ip).toBe('127.0.0.2')
  })

  it('writes an IPv4-mapped IPv6 peer or forwarded address as plain IPv4', async () => {
    const peer = await attributes({ uri: '/attributes', server: { REMOTE_ADDR: '::ffff:1.2.3.4' } })
    expect(peer.body.client_ip).toBe('1.2.3.4')
    const forwarded = await attributes({
      uri: '/attributes',
      headers: { 'x-forwarded-for': '::ffff:5.6.7.8' },
      server: { REMOTE_ADDR: '::ffff:127.0.0.1' },
    })
    expect(forwarded.body.client_ip).toBe('5.6.7.8')
  })

  it("follows the kernel's proxy trust (request.trustProxy): a distrusted loopback peer's X-Forwarded-For is ignored", async () => {
    const strict = await bootKernel(routes, { request: { trustProxy: () => false } })
    const server = await serve(strict)
    try {
      const reply = await server.send('GET', '/attributes', {
        headers: { 'x-forwarded-for': '198.51.100.7' },
      })
      expect(JSON.parse(reply.text).client_ip).toBe('127.0.0.1')
    } finally {
      await server.close()
    }
  })
})

describe('negotiate', () => {
  it('sets type, charset and locale from Accept, Accept-Charset and Accept-Language', async () => {
    const response = await call(kernel, {
      uri: '/negotiate',
      headers: {
        accept: 'text/plain;q=0.9, text/html;q=0.1',
        'accept-charset': 'iso-8859-1, utf-8;q=0.5',
        'accept-language': 'en-GB, fr;q=0.5',
      },
    })
    expect(await jsonOf(response)).toEqual({
      type: 'text/plain',
      charset: 'iso-8859-1',
      locale: 'en-GB',
    })
  })

  it('defaults to JSON, utf-8 and the locale en without the headers', async () => {
    expect(await jsonOf(await call(kernel, '/negotiate'))).toEqual({
      type: 'application/json',
      charset: 'utf-8',
      locale: 'en',
    })
  })

  it('gives a null type when nothing offered is acceptable', async () => {
    const response = await call(kernel, {
      uri: '/negotiate',
      headers: { accept: 'image/png', 'accept-language': 'de' },
    })
    expect(await jsonOf(response)).toMatchObject({ type: null, locale: 'de' })
  })

  /** The `locale` the route at `uri` answers for an Accept-Language header. */
  const localeAt =
    (uri: string) =>
    async (header: string): Promise<unknown> =>
      (
        (await jsonOf(await call(kernel, { uri, headers: { 'accept-language': header } }))) as {
          locale: unknown
        }
      ).locale

  it('skips language tags that are not well-formed, and * (the header is hostile)', async () => {
    const locale = localeAt('/negotiate')
    expect(await locale('<script>alert(1)</script>, fr-CH;q=0.8')).toBe('fr-CH')
    expect(await locale('*, de;q=0.1')).toBe('de')
    expect(await locale('en_US"')).toBe('en')
  })

  it('picks from the locales the alias names (negotiate:en,fr), else the first of them', async () => {
    const locale = localeAt('/negotiate-listed')
    expect(await locale('de-CH, fr;q=0.8, en;q=0.5')).toBe('fr')
    expect(await locale('en-GB')).toBe('en')
    expect(await locale('de')).toBe('en')
  })

  it('runs only where the alias is applied', async () => {
    expect(await jsonOf(await call(kernel, '/plain'))).toEqual({ type: 'unset' })
  })
})
