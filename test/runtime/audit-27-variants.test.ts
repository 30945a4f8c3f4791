/**
 * Audit 27, the ways a user wires the kernel into a Node server and what sits in front of it.
 *
 * - node:http2 through its compatibility API (`attachKernel(http2.createServer(), …)`, and the
 *   TLS server with `allowHTTP1`): an HTTP/2 request names its host in `:authority`, not Host,
 *   so every request was read as addressed to the server's own address (domain routes never
 *   matched, getUri() and the production HTTPS redirect named the wrong host); a body sent
 *   without Content-Length (HTTP/2 frames bodies itself, so clients mostly send none) was read
 *   as empty; and a handler's Connection or Keep-Alive header, harmless on HTTP/1.1, made
 *   Node refuse the response (ERR_HTTP2_INVALID_CONNECTION_HEADERS: a 500).
 * - A Unix domain socket behind a local proxy (nginx's `proxy_pass http://unix:/run/app.sock`):
 *   the peer has no address, so X-Forwarded-* was never honoured (client_ip '' for everyone: one
 *   throttle budget for every client, and in production every request redirected to https
 *   again, for ever, since X-Forwarded-Proto was ignored).
 */
import { execFileSync } from 'node:child_process'
import { request as httpRequest, createServer as createHttpServer, type Server } from 'node:http'
import http2 from 'node:http2'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../src/runtime/kernel.js'
import { attachKernel } from '../../src/runtime/node-adapter.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { create, json, stream } from '../../src/runtime/response.js'
import { tempDir } from '../support/compile.js'
import { bootKernel, captureLogger, cleanupTempDirs, type Register } from './kernel/support.js'

const closers: Array<() => Promise<void>> = []

afterAll(async () => {
  for (const close of closers.splice(0)) await close()
  cleanupTempDirs()
})

const routes: Register = (r) => {
  r.get('/where', (req: FwRequest) =>
    json({
      host: req.getHost(),
      uri: String(req.getUri()),
      ip: req.getAttribute('client_ip'),
      headers: Object.keys(req.getHeaders()),
    }),
  )
  r.group({ domain: '{account}.example.com' }, (r) => {
    r.get('/whoami', (_req: FwRequest, account: string) => json({ account }), 'whoami')
  })
  r.post('/echo', async (req: FwRequest) => {
    await req.loadBody()
    return json({ got: req.input() })
  })
  r.get('/hop-by-hop', () =>
    create('kept', 200, { connection: 'keep-alive', 'keep-alive': 'timeout=5', upgrade: 'h2c' }),
  )
  r.get('/counted', (req: FwRequest) => json({ ip: req.getAttribute('client_ip') }), {
    name: 'counted',
    middleware: ['throttle:2,60'],
  })
}

/** A self-signed certificate for localhost, made with openssl. */
function certificate(): { key: Buffer; cert: Buffer } {
  const dir = tempDir('fw-audit27-tls-')
  const key = join(dir, 'key.pem')
  const cert = join(dir, 'cert.pem')
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
  ])
  return { key: readFileSync(key), cert: readFileSync(cert) }
}

interface H2Reply {
  status: number
  headers: http2.IncomingHttpHeaders
  text: string
}

/** Serves `kernel` over HTTP/2: cleartext (h2c) or TLS with HTTP/1.1 allowed. */
async function serveH2(kernel: Kernel, tls: boolean): Promise<string> {
  const server = tls
    ? http2.createSecureServer({ ...certificate(), allowHTTP1: true })
    : http2.createServer()
  attachKernel(server, () => kernel)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  closers.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve())
      }),
  )
  return `${tls ? 'https' : 'http'}://127.0.0.1:${port}`
}

/** One HTTP/2 request with node's client; `body` is sent without a Content-Length. */
function h2(origin: string, headers: http2.OutgoingHttpHeaders, body?: string): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(origin, { rejectUnauthorized: false })
    client.on('error', reject)
    const req = client.request(headers, { endStream: body === undefined })
    let text = ''
    let head: http2.IncomingHttpHeaders = {}
    req.on('response', (h) => (head = h))
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    req.on('end', () => {
      client.close()
      resolve({ status: Number(head[':status']), headers: head, text })
    })
    req.on('error', (error) => {
      client.close()
      reject(error)
    })
    if (body !== undefined) req.end(body)
  })
}

describe.each([
  ['h2c (http2.createServer)', false],
  ['h2 over TLS (createSecureServer, allowHTTP1)', true],
])('attachKernel on %s', (_name, tls) => {
  let origin = ''
  const start = async (): Promise<string> =>
    (origin ||= await serveH2(await bootKernel(routes), tls))

  it('reads the host from :authority (domain routes, getUri)', async () => {
    const at = await start()
    const scheme = tls ? 'https' : 'http'
    const where = await h2(at, { ':path': '/where', ':authority': 'app.example.org:8443' })
    expect(where.status).toBe(200)
    const seen = JSON.parse(where.text)
    expect(seen.host).toBe('app.example.org')
    expect(seen.uri).toBe(`${scheme}://app.example.org:8443/where`)
    // Pseudo-header fields are no header fields of the request.
    expect(seen.headers.filter((name: string) => name.startsWith(':'))).toEqual([])
    const whoami = await h2(at, { ':path': '/whoami', ':authority': 'acme.example.com' })
    expect([whoami.status, whoami.text]).toEqual([200, '{"account":"acme"}'])
  })

  it('reads a body sent without Content-Length', async () => {
    const at = await start()
    const answer = await h2(
      at,
      { ':method': 'POST', ':path': '/echo', 'content-type': 'application/json' },
      '{"name":"Ada"}',
    )
    expect([answer.status, answer.text]).toEqual([200, '{"got":{"name":"Ada"}}'])
  })

  it("drops a handler's connection-specific headers instead of failing the response", async () => {
    const at = await start()
    const answer = await h2(at, { ':path': '/hop-by-hop' })
    expect([answer.status, answer.text]).toEqual([200, 'kept'])
    expect(answer.headers['keep-alive']).toBeUndefined()
    expect(answer.headers.upgrade).toBeUndefined()
  })
})

describe('a client that cancels an HTTP/2 download', () => {
  it('stops the stream without logging a failure (as a client gone over HTTP/1.1)', async () => {
    const log = captureLogger()
    let stopped!: () => void
    const stoppedNow = new Promise<void>((resolve) => (stopped = resolve))
    const kernel = await bootKernel(
      (r) => {
        r.get('/download', () =>
          (async function* () {
            try {
              for (;;) {
                yield 'x'.repeat(16_384)
                await new Promise((resolve) => setImmediate(resolve))
              }
            } finally {
              stopped()
            }
          })(),
        )
      },
      { log },
    )
    const at = await serveH2(kernel, false)
    const client = http2.connect(at)
    const req = client.request({ ':path': '/download' })
    req.once('data', () => req.close(http2.constants.NGHTTP2_CANCEL))
    req.on('error', () => {})
    await stoppedNow
    // The body's 'close' follows its generator's end.
    await new Promise((resolve) => setTimeout(resolve, 100))
    client.close()
    expect(log.lines.filter((line) => line.level !== 'debug')).toEqual([])
  })
})

describe('HTTP/2 in production (cleartext behind a TLS terminator)', () => {
  it('redirects to the https URL of the host the client named', async () => {
    const at = await serveH2(await bootKernel(routes, { env: 'production' }), false)
    const answer = await h2(at, { ':path': '/where?x=1', ':authority': 'app.example.org' })
    expect(answer.status).toBe(301)
    expect(answer.headers.location).toBe('https://app.example.org/where?x=1')
  })
})

/** An HTTP/1.1 server on a Unix domain socket, as nginx's `proxy_pass http://unix:…` reaches. */
async function serveUnix(kernel: Kernel): Promise<string> {
  const socketPath = join(tempDir('fw-audit27-sock-'), 'app.sock')
  const server: Server = attachKernel(createHttpServer(), () => kernel)
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return socketPath
}

function overUnix(
  socketPath: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end()
  })
}

// What nginx sends on: its own X-Forwarded-For, -Proto and -Host.
const fromProxy = (client: string): Record<string, string> => ({
  host: 'app.example.org',
  'x-forwarded-for': client,
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'app.example.org',
})

describe('a Unix domain socket behind a local reverse proxy (default TRUSTED_PROXIES)', () => {
  it('honours X-Forwarded-* from the socket peer, as from loopback', async () => {
    const socketPath = await serveUnix(await bootKernel(routes))
    const answer = await overUnix(socketPath, '/where', fromProxy('203.0.113.9'))
    expect(answer.status).toBe(200)
    const seen = JSON.parse(answer.text)
    expect(seen.ip).toBe('203.0.113.9')
    expect(seen.uri).toBe('https://app.example.org/where')
  })

  it('counts each client behind the proxy against its own throttle budget', async () => {
    const socketPath = await serveUnix(await bootKernel(routes))
    for (let i = 0; i < 2; i++)
      expect((await overUnix(socketPath, '/counted', fromProxy('203.0.113.10'))).status).toBe(200)
    expect((await overUnix(socketPath, '/counted', fromProxy('203.0.113.10'))).status).toBe(429)
    const other = await overUnix(socketPath, '/counted', fromProxy('203.0.113.11'))
    expect([other.status, JSON.parse(other.text).ip]).toEqual([200, '203.0.113.11'])
  })

  it('verifies a signed URL of payload mode absolute made for the public URL', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/signed/{id:int}', (_req: FwRequest, id: number) => json({ id }), {
        name: 'signed',
        middleware: ['verifySignedUrl'],
      })
    })
    kernel.router.setBaseUrl('https://app.example.org')
    const socketPath = await serveUnix(kernel)
    const url = new URL(kernel.signer.signedUrlFor('signed', { id: 7 }, {}, 600, true, 'absolute'))
    expect(url.origin).toBe('https://app.example.org')
    const answer = await overUnix(socketPath, url.pathname + url.search, fromProxy('203.0.113.13'))
    expect([answer.status, answer.text]).toEqual([200, '{"id":7}'])
  })

  it('does not redirect requests the proxy received over https, in production', async () => {
    const socketPath = await serveUnix(await bootKernel(routes, { env: 'production' }))
    const answer = await overUnix(socketPath, '/where', fromProxy('203.0.113.12'))
    expect(answer.status).toBe(200)
    const plain = await overUnix(socketPath, '/where', {
      ...fromProxy('203.0.113.12'),
      'x-forwarded-proto': 'http',
    })
    expect([plain.status, plain.headers.location]).toEqual([301, 'https://app.example.org/where'])
  })
})

// CONNECT, HEAD and header lists over HTTP/2 (found reviewing the HTTP/2 support).
const moreRoutes: Register = (r) => {
  r.get('/where', (req: FwRequest) => json({ host: req.getHost() }))
  r.get('/cookies', () => create('two', 200, { 'set-cookie': ['a=1', 'b=2'] }))
  r.get('/stream', () => stream(Readable.from(['a', 'b']), 200, { 'content-type': 'text/plain' }))
  r.get('/stream-len', () => stream(Readable.from(['ab']), 200, { 'content-length': '2' }))
  r.get('/crash', () => {
    throw new Error('boom')
  })
}

describe('node:http2 through attachKernel: CONNECT, HEAD, header lists', () => {
  it('answers CONNECT with the 501 JSON error, not a 200 carrying an HTTP/1.1 response', async () => {
    const at = await serveH2(await bootKernel(moreRoutes), false)
    const answer = await h2(at, { ':method': 'CONNECT', ':authority': 'example.com:443' })
    expect(answer.status).toBe(501)
    expect(JSON.parse(answer.text)).toEqual({ error: 'Not Implemented', code: 501 })
    expect(answer.headers['cache-control']).toBe('no-store')
  })

  it('still serves the connection after a CONNECT on one of its streams', async () => {
    const at = await serveH2(await bootKernel(moreRoutes), false)
    const client = http2.connect(at)
    const connect = client.request({ ':method': 'CONNECT', ':authority': 'example.com:443' })
    const status = await new Promise((resolve) =>
      connect.on('response', (h) => resolve(h[':status'])),
    )
    connect.resume()
    const req = client.request({ ':path': '/where', ':authority': 'a.example' })
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    await new Promise((resolve) => req.on('end', resolve))
    client.close()
    expect([status, text]).toEqual([501, '{"host":"a.example"}'])
  })

  it('answers HEAD without a body (buffered, streamed and the 500)', async () => {
    const at = await serveH2(await bootKernel(moreRoutes), false)
    for (const path of ['/where', '/stream', '/stream-len', '/crash']) {
      const answer = await h2(at, { ':method': 'HEAD', ':path': path })
      expect(answer.text).toBe('')
    }
  })

  it('sends every value of a header given as a list (Set-Cookie)', async () => {
    const at = await serveH2(await bootKernel(moreRoutes), false)
    const answer = await h2(at, { ':path': '/cookies' })
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2'])
  })
})
