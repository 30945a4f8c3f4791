/**
 * The access log (kernel option `accessLog`): one `info` line per answered request, with
 * pino-http's fields (`req` {id, method, url, remoteAddress}, `res` {statusCode}, `responseTime`),
 * "request completed" or "request aborted"; never a header value or a body; a signed URL's
 * `_sig` redacted. Off by default. Served over real HTTP through the node adapter.
 */
import { once } from 'node:events'
import { createServer, request as httpRequest, type ServerResponse } from 'node:http'
import { connect, constants, createServer as createHttp2Server } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../src/runtime/kernel.js'
import { attachKernel } from '../../src/runtime/node-adapter.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { stream } from '../../src/runtime/response.js'
import type { Logger } from '../../src/runtime/types.js'
import { devLogger } from '../../src/serve/dev-logger.js'
import { rawExchange } from '../support/raw-http.js'
import { bootKernel, cleanupTempDirs, type Register } from './kernel/support.js'

afterAll(cleanupTempDirs)

interface Line {
  level: string
  fields: Record<string, any>
  msg: string | undefined
}

/** A real logger (the four methods) that keeps its lines, and says when an info line comes. */
function keepingLogger(): Logger & { lines: Line[]; nextInfo: () => Promise<Line> } {
  const lines: Line[] = []
  const waiting: ((line: Line) => void)[] = []
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      const line = {
        level,
        fields: (typeof obj === 'string' ? {} : obj) as Record<string, any>,
        msg: typeof obj === 'string' ? obj : msg,
      }
      lines.push(line)
      if (level === 'info') waiting.shift()?.(line)
    }
  return {
    lines,
    nextInfo: () => new Promise((resolve) => waiting.push(resolve)),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
}

let arrived: () => void = () => {}
let release: () => void = () => {}

const routes: Register = (r) => {
  r.get('/users/{id}', (req: FwRequest) => ({ ip: req.getAttribute('client_ip') }), 'users.show')
  r.post('/login', (req: FwRequest) => ({ ok: req.input('password') !== undefined }), 'login')
  r.get('/files/{id:int}', (_req: unknown, id: number) => ({ id }), {
    name: 'files.show',
    middleware: ['verifySignedUrl'],
  })
  r.get('/big', () => 'x'.repeat(4 * 1024 * 1024), 'big')
  // Sends its status and a first chunk, then waits for the test to release it.
  r.get(
    '/stream',
    () =>
      stream(
        (async function* () {
          yield 'first chunk\n'
          arrived()
          await new Promise<void>((resolve) => (release = resolve))
          yield 'last chunk\n'
        })(),
      ),
    'stream',
  )
  // Answers once the test releases it; says when it started, with the id its request carries.
  r.get(
    '/slow',
    async (req: FwRequest) => {
      seenId = req.getAttribute('request_id') as string
      arrived()
      await new Promise<void>((resolve) => (release = resolve))
      return 'late'
    },
    'slow',
  )
}
let seenId = ''

interface Exchange {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

/** Serves `kernel` on 127.0.0.1; `closed()` resolves when the server's next response closes. */
async function served(kernel: Kernel) {
  const server = attachKernel(createServer(), () => kernel)
  const responses: ServerResponse[] = []
  server.on('request', (_req, res: ServerResponse) => void responses.push(res))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  const send = (
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<Exchange> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method, path, headers, agent: false },
        (res) => {
          let text = ''
          res.on('data', (chunk: Buffer) => (text += chunk.toString()))
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  const close = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return { port, send, close, responses }
}

const accessKernel = (log: Logger, options = {}): Promise<Kernel> =>
  bootKernel(routes, { log, accessLog: true, ...options })

describe('the access log', () => {
  it('logs a line per request: id, method, url, client address, status, time', async () => {
    const log = keepingLogger()
    const app = await served(await accessKernel(log))
    try {
      const logged = log.nextInfo()
      const answer = await app.send('GET', '/users/42?tab=posts', {
        'x-forwarded-for': '203.0.113.7',
      })
      const line = await logged
      expect(answer.status).toBe(200)
      expect(line.msg).toBe('request completed')
      expect(line.fields).toEqual({
        req: {
          id: answer.headers['x-request-id'],
          method: 'GET',
          url: '/users/42?tab=posts',
          remoteAddress: '203.0.113.7',
        },
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
      })
      // The client address is the one client_ip resolved (loopback is a trusted proxy).
      expect(JSON.parse(answer.text)).toEqual({ ip: '203.0.113.7' })
      expect(line.fields.responseTime).toBeGreaterThanOrEqual(0)

      const missing = log.nextInfo()
      const notFound = await app.send('DELETE', '/nowhere', { 'x-request-id': 'proxy-id-1' })
      expect(notFound.status).toBe(404)
      expect((await missing).fields).toMatchObject({
        req: { id: 'proxy-id-1', method: 'DELETE', url: '/nowhere', remoteAddress: '127.0.0.1' },
        res: { statusCode: 404 },
      })
    } finally {
      await app.close()
    }
  })

  it('logs a client that left before its answer as aborted, with the id the app saw', async () => {
    const log = keepingLogger()
    const app = await served(await accessKernel(log))
    try {
      const started = new Promise<void>((resolve) => (arrived = resolve))
      const req = httpRequest({ host: '127.0.0.1', port: app.port, path: '/slow', agent: false })
      req.on('error', () => {})
      req.end()
      await started
      const logged = log.nextInfo()
      req.destroy()
      const line = await logged
      expect(line.msg).toBe('request aborted')
      expect(line.fields).toMatchObject({
        req: { id: seenId, method: 'GET', url: '/slow' },
        res: { statusCode: null },
      })
      expect(seenId).toMatch(/^[0-9a-f-]{36}$/)
    } finally {
      release()
      await app.close()
    }
  })

  it('logs a download cut off by its client as aborted, with the status it was sent', async () => {
    const log = keepingLogger()
    const app = await served(await accessKernel(log))
    try {
      const started = new Promise<void>((resolve) => (arrived = resolve))
      const req = httpRequest({ host: '127.0.0.1', port: app.port, path: '/stream', agent: false })
      req.on('error', () => {})
      req.on('response', (res) => res.once('data', () => void started.then(() => req.destroy())))
      req.end()
      const line = await log.nextInfo()
      expect(line.msg).toBe('request aborted')
      expect(line.fields).toMatchObject({ req: { url: '/stream' }, res: { statusCode: 200 } })
    } finally {
      release()
      await app.close()
    }
  })

  it('over HTTP/2 too: a stream the client cancelled is aborted', async () => {
    const log = keepingLogger()
    const kernel = await accessKernel(log)
    const server = attachKernel(createHttp2Server(), () => kernel)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    try {
      const done = log.nextInfo()
      const first = client.request({ ':path': '/users/7?api_key=k1' })
      first.resume()
      first.end()
      expect(await done).toMatchObject({
        msg: 'request completed',
        fields: {
          req: { method: 'GET', url: '/users/7?api_key=[Redacted]', remoteAddress: '127.0.0.1' },
          res: { statusCode: 200 },
        },
      })
      const started = new Promise<void>((resolve) => (arrived = resolve))
      const slow = client.request({ ':path': '/slow' })
      slow.on('error', () => {})
      slow.end()
      await started
      const aborted = log.nextInfo()
      slow.close(constants.NGHTTP2_CANCEL)
      const line = await aborted
      expect(line.msg).toBe('request aborted')
      expect(line.fields).toMatchObject({
        req: { id: seenId, url: '/slow' },
        res: { statusCode: null },
      })
      // A body written whole (end() called) but cut off: node:http2 calls such a stream finished.
      const cut = log.nextInfo()
      const big = client.request({ ':path': '/big' })
      big.on('error', () => {})
      big.on('response', () => big.close(constants.NGHTTP2_CANCEL))
      big.end()
      expect(await cut).toMatchObject({
        msg: 'request aborted',
        fields: { req: { url: '/big' }, res: { statusCode: 200 } },
      })
    } finally {
      release()
      client.close()
      server.close()
    }
  })

  it('never carries Authorization, Cookie or the body', async () => {
    const log = keepingLogger()
    const app = await served(await accessKernel(log))
    try {
      const logged = log.nextInfo()
      const answer = await app.send(
        'POST',
        '/login',
        {
          authorization: 'Bearer secret-bearer-value',
          cookie: 'sid=secret-cookie-value',
          'content-type': 'application/json',
        },
        JSON.stringify({ password: 'secret-body-value' }),
      )
      expect(answer.status).toBe(200)
      const text = JSON.stringify((await logged).fields)
      expect(text).not.toMatch(/secret|Bearer|sid=/)
      expect(text).toContain('"url":"/login"')
    } finally {
      await app.close()
    }
  })

  it("redacts a signed URL's _sig, and query parameters that name a credential", async () => {
    const log = keepingLogger()
    const kernel = await accessKernel(log)
    const app = await served(kernel)
    try {
      const signed = kernel.signer.temporaryUrlFor('files.show', { id: 7 }, { v: '2' }, 300)
      const sig = new URL(signed, 'http://x').searchParams.get('_sig')!
      const logged = log.nextInfo()
      expect((await app.send('GET', signed)).status).toBe(200)
      const url = (await logged).fields.req.url as string
      expect(url).not.toContain(sig)
      expect(url).toMatch(/^\/files\/7\?v=2&_exp=\d+&_sig=\[Redacted\]$/)

      const next = log.nextInfo()
      await app.send('GET', '/users/1?access_token=tok123&%5Fsig=abc&page=2')
      expect((await next).fields.req.url).toBe(
        '/users/1?access_token=[Redacted]&%5Fsig=[Redacted]&page=2',
      )
    } finally {
      await app.close()
    }
  })

  it('logs what is refused before routing too (HTTP/1.1 without Host: 400)', async () => {
    const log = keepingLogger()
    const app = await served(await accessKernel(log))
    try {
      const logged = log.nextInfo()
      const reply = await rawExchange(app.port, ['GET /no-host HTTP/1.1'])
      expect(reply).toMatch(/^HTTP\/1\.1 400 /)
      expect((await logged).fields).toMatchObject({
        req: { method: 'GET', url: '/no-host', remoteAddress: '127.0.0.1' },
        res: { statusCode: 400 },
      })
    } finally {
      await app.close()
    }
  })

  it('is off by default: no line, no listener on the response', async () => {
    const log = keepingLogger()
    const app = await served(await bootKernel(routes, { log }))
    try {
      const answer = await app.send('GET', '/users/42')
      expect(answer.status).toBe(200)
      const res = app.responses[0]!
      if (!res.closed) await once(res, 'close')
      // Only Node's own 'close' listeners: the response keeps none of the access log's.
      expect(res.listenerCount('close')).toBe(0)
      expect(log.lines.filter((line) => line.level === 'info')).toEqual([])
    } finally {
      await app.close()
    }
  })

  it('refuses an accessLog that is not a boolean at boot', async () => {
    await expect(bootKernel(routes, { accessLog: 'false' as never })).rejects.toThrow(
      'accessLog must be true or false, not "false"',
    )
  })
})

describe("fw serve's readable log", () => {
  it('prints a request as `GET /users/42 200 1.2 ms`', async () => {
    const printed: string[] = []
    const waiting: (() => void)[] = []
    const log = devLogger('debug', (line) => {
      printed.push(stripVTControlCharacters(line))
      waiting.shift()?.()
    })
    const app = await served(await accessKernel(log))
    try {
      const logged = new Promise<void>((resolve) => waiting.push(resolve))
      await app.send('GET', '/users/42?_sig=abc')
      await logged
      expect(printed).toEqual([
        expect.stringMatching(
          /^\d\d:\d\d:\d\d INFO {2}GET \/users\/42\?_sig=\[Redacted\] 200 \d+\.\d ms$/,
        ),
      ])
    } finally {
      await app.close()
    }
  })

  it('escapes control characters of the target, and marks a client that left', () => {
    const printed: string[] = []
    const log = devLogger('debug', (line) => printed.push(stripVTControlCharacters(line)))
    const req = { id: 'r', method: 'GET', url: '/a\u001b[2J\u009b31m\u2028b', remoteAddress: '::1' }
    log.info({ req, res: { statusCode: null }, responseTime: 12.34 }, 'request aborted')
    expect(printed[0]).toMatch(/ INFO {2}GET \/a\\x1b\[2J\\x9b31m\\u2028b aborted 12\.3 ms$/)
  })
})
