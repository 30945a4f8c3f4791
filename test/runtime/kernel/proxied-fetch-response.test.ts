/**
 * A handler that returns `fetch(upstream)` proxies it. fetch() decodes a gzip body as it reads
 * it, but keeps the upstream's Content-Encoding and Content-Length; passed on, the client would
 * decode plain bytes again. Hop-by-hop fields (Connection, Keep-Alive and those Connection names)
 * describe the upstream's connection, not the client's. Real upstream, real HTTP.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

let upstream: Server
let upstreamUrl = ''
let served: Served

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    const body = gzipSync('hello from upstream')
    res.writeHead(200, {
      'content-type': 'text/plain',
      'content-encoding': 'gzip',
      'content-length': body.length,
      connection: 'keep-alive, x-hop',
      'keep-alive': 'timeout=5',
      'x-hop': 'upstream only',
      'x-kept': 'yes',
    })
    res.end(body)
  })
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`
  served = await serve(
    await bootKernel((r) => {
      r.get('/proxy', () => fetch(upstreamUrl))
      r.get(
        '/made',
        () => new Response(gzipSync('made here'), { headers: { 'content-encoding': 'gzip' } }),
      )
    }),
  )
})

afterAll(async () => {
  await served.close()
  await new Promise((done) => upstream.close(done))
  cleanupTempDirs()
})

/** GET `path` on fw with Connection: close; the raw body bytes and the headers. */
function get(path: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: served.port,
        path,
        headers: { connection: 'close' },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
      },
    )
    req.on('error', reject).end()
  })
}

describe('a handler returning a fetch() Response', () => {
  it('sends the decoded body without the upstream Content-Encoding, nor its hop-by-hop fields', async () => {
    const { headers, body } = await get('/proxy')
    expect(body.toString()).toBe('hello from upstream')
    expect(headers['content-encoding']).toBeUndefined()
    expect(headers['x-hop']).toBeUndefined()
    expect(headers['keep-alive']).toBeUndefined()
    expect(headers.connection).toBe('close')
    expect(headers['x-kept']).toBe('yes')
  })

  it('keeps the Content-Encoding of a Response made in the app, whose body is still encoded', async () => {
    const { headers, body } = await get('/made')
    expect(headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(body).toString()).toBe('made here')
  })
})
