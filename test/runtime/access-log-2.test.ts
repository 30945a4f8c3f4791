/**
 * The access log, continued (see access-log.test.ts):
 * - a 5xx is "request errored", as pino-http says it, with `err` naming what failed (type, code,
 *   message; not its stack, which the error boundary's line has under the same request id);
 * - a request Node's parser refuses (the server's 'clientError') or CONNECT gets a line too, with
 *   its method and target only when its request line could be read (the target cut short,
 *   control characters escaped, credentials redacted), never other bytes it sent;
 * - the credentials of cloud pre-signed URLs and OAuth (X-Amz-Signature, X-Goog-Credential, an
 *   Azure SAS `sig`, `code`, ...) are redacted from the target.
 * Served over real HTTP through `attachKernel`.
 */
import { connect, type AddressInfo } from 'node:net'
import { once } from 'node:events'
import { createServer, request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Kernel } from '../../src/runtime/kernel.js'
import { createLogger, redactTarget } from '../../src/runtime/logger.js'
import { attachKernel } from '../../src/runtime/node-adapter.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { json } from '../../src/runtime/response.js'
import type { Logger } from '../../src/runtime/types.js'
import { devLogger } from '../../src/serve/dev-logger.js'
import { bootKernel, cleanupTempDirs, type Register } from './kernel/support.js'
import { exchange } from './kernel/wire.js'

interface Line {
  level: string
  fields: Record<string, any>
  msg: string | undefined
}

/**
 * A real logger (the four methods) that keeps its lines; `next()` is the next info line, and
 * `forget()` drops the waits a failed test left.
 */
function keepingLogger(): Logger & {
  lines: Line[]
  next: () => Promise<Line>
  forget: () => void
} {
  const lines: Line[] = []
  const waiting: ((line: Line) => void)[] = []
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      const fields = (typeof obj === 'string' ? {} : obj) as Record<string, any>
      const line = { level, fields, msg: typeof obj === 'string' ? obj : msg }
      lines.push(line)
      if (level === 'info') waiting.shift()?.(line)
    }
  return {
    lines,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    forget: () => void (waiting.length = 0),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
}

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl'

const routes: Register = (r) => {
  r.get('/ok', () => 'ok')
  r.get('/boom', () => {
    throw new Error(`upstream refused token ${JWT}`)
  })
  r.get('/busy', () => json({ error: 'busy' }, 503))
  // Node is never handed this status: writing it fails, and the adapter answers a plain 500.
  r.get('/odd', () => json({}, 600))
  r.post('/echo', (req: FwRequest) => ({ got: req.input() }))
}

async function served(log: Logger): Promise<{ port: number; kernel: Kernel; close(): void }> {
  const kernel = await bootKernel(routes, { log, accessLog: true })
  const server = attachKernel(createServer(), () => kernel)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: (server.address() as AddressInfo).port,
    kernel,
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

function get(port: number, path: string): Promise<{ status: number; id: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume()
      res.on('end', () =>
        resolve({ status: res.statusCode!, id: res.headers['x-request-id'] as string }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

const log = keepingLogger()
let app: Awaited<ReturnType<typeof served>>

beforeAll(async () => {
  app = await served(log)
})

beforeEach(() => log.forget())

afterAll(() => {
  app.close()
  cleanupTempDirs()
})

describe('a 5xx in the access log', () => {
  it('is "request errored" with a reference to the error logged, not its stack', async () => {
    const line = log.next()
    const answer = await get(app.port, '/boom')
    expect(answer.status).toBe(500)
    const { fields, msg, level } = await line
    expect(level).toBe('info')
    expect(msg).toBe('request errored')
    expect(fields).toEqual({
      req: { id: answer.id, method: 'GET', url: '/boom', remoteAddress: '127.0.0.1' },
      res: { statusCode: 500 },
      responseTime: expect.any(Number),
      err: expect.objectContaining({
        type: 'Error',
        message: 'upstream refused token [Redacted]',
      }),
    })
    expect(JSON.stringify(fields)).not.toMatch(/stack|at .*\.ts/)
    // The error boundary's own line has the stack, under the same request id.
    const logged = log.lines.find((l) => l.level === 'error' && l.fields.request_id === answer.id)
    expect(logged?.fields.err).toBeInstanceOf(Error)
  })

  it('is "request errored" without err when the handler answered it; a 4xx is "completed"', async () => {
    const busy = log.next()
    expect((await get(app.port, '/busy')).status).toBe(503)
    const line = await busy
    expect(line.msg).toBe('request errored')
    expect(line.fields).not.toHaveProperty('err')
    const missing = log.next()
    expect((await get(app.port, '/nowhere')).status).toBe(404)
    expect((await missing).msg).toBe('request completed')
  })

  it('names what failed when the response could not be written (a plain 500)', async () => {
    const line = log.next()
    expect((await get(app.port, '/odd')).status).toBe(500)
    expect(await line).toMatchObject({
      msg: 'request errored',
      fields: { res: { statusCode: 500 }, err: { type: 'RangeError' } },
    })
  })

  it('reads as pino-http writes it: err {type, message} through the default pino logger', async () => {
    let text = ''
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk)
        done()
      },
    })
    const other = await served(createLogger('production', 'info', sink))
    try {
      const answer = await get(other.port, '/boom')
      await expect.poll(() => text.includes('request errored')).toBe(true)
      const line = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>)
        .find((l) => l.msg === 'request errored')!
      expect(line).toMatchObject({ level: 30, req: { id: answer.id }, res: { statusCode: 500 } })
      expect(line.err).toEqual({ type: 'Error', message: 'upstream refused token [Redacted]' })
    } finally {
      other.close()
    }
  })

  it("is printed by fw serve's readable log as its other lines are", () => {
    const printed: string[] = []
    const dev = devLogger('debug', (line) => printed.push(stripVTControlCharacters(line)))
    const req = { id: 'r', method: 'GET', url: '/boom', remoteAddress: '::1' }
    const err = { type: 'Error', message: 'x' }
    dev.info({ req, res: { statusCode: 500 }, responseTime: 1.25, err }, 'request errored')
    dev.info(
      { req: { remoteAddress: '::1' }, res: { statusCode: 400 }, responseTime: 0 },
      'request completed',
    )
    expect(printed[0]).toMatch(/ INFO {2}GET \/boom 500 1\.3 ms$/)
    expect(printed[1]).toMatch(/ INFO {2}\? \? 400 0\.0 ms$/)
  })
})

/** The next info line, once `text` was written on a new connection and answered. */
async function refused(text: string | Buffer): Promise<{ answer: string; line: Line }> {
  const line = log.next()
  const { text: answer } = await exchange(app.port, text, { waitMs: 5000 })
  return { answer, line: await line }
}

describe('a request refused at the wire in the access log', () => {
  it('logs what the parser refused: the request line when it can be read', async () => {
    const { answer, line } = await refused('GET /y?token=abc&page=2 HTTP/1.1\r\nHo st: x\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(line.msg).toBe('request completed')
    expect(line.fields).toEqual({
      req: { method: 'GET', url: '/y?token=[Redacted]&page=2', remoteAddress: '127.0.0.1' },
      res: { statusCode: 400 },
      responseTime: expect.any(Number),
    })
  })

  it('logs a 501 for an unknown method as errored, with the parser error, not its bytes', async () => {
    const { answer, line } = await refused('BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 501 /)
    expect(line.msg).toBe('request errored')
    expect(line.fields).toMatchObject({
      req: { method: 'BREW', url: '/pot', remoteAddress: '127.0.0.1' },
      res: { statusCode: 501 },
      err: { code: 'HPE_INVALID_METHOD' },
    })
    expect(JSON.stringify(line.fields)).not.toContain('rawPacket')
  })

  it('logs a request after another on its connection, and the one before it', async () => {
    const lines = Promise.all([log.next(), log.next()])
    await exchange(
      app.port,
      'GET /ok HTTP/1.1\r\nHost: x\r\n\r\nGET /z HTTP/1.1\r\nHo st: x\r\n\r\n',
    )
    const byUrl = Object.fromEntries((await lines).map((line) => [line.fields.req.url, line]))
    expect(byUrl['/ok']!.fields).toMatchObject({ res: { statusCode: 200 } })
    expect(byUrl['/z']!.fields).toMatchObject({ req: { method: 'GET' }, res: { statusCode: 400 } })
  })

  it('cuts a target over the limit (414), escapes its control characters', async () => {
    const long = await refused(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(long.answer).toMatch(/^HTTP\/1\.1 414 /)
    expect(long.line.fields.req.url).toBe(`/${'a'.repeat(255)}… [19745 more characters]`)
    const escaped = await refused('GET /a\u001b[2Jb HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(escaped.answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(escaped.line.fields.req.url).toBe('/a\\x1b[2Jb')
  })

  it('names no method or target for bytes that are no request line (TLS on a plain port)', async () => {
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])
    const { answer, line } = await refused(hello)
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(line.fields).toEqual({
      req: { remoteAddress: '127.0.0.1' },
      res: { statusCode: 400 },
      responseTime: expect.any(Number),
    })
  })

  it('logs headers over the limit (431) with the request line before them', async () => {
    // A limit that one read goes over: a read of a larger head may start inside a header, and
    // then no request line is shown.
    const server = attachKernel(createServer({ maxHeaderSize: 1024 }), () => app.kernel)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const line = log.next()
      const { text } = await exchange(
        (server.address() as AddressInfo).port,
        `GET /big?api_key=k HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(2000)}\r\n\r\n`,
      )
      expect(text).toMatch(/^HTTP\/1\.1 431 /)
      expect((await line).fields).toMatchObject({
        req: { method: 'GET', url: '/big?api_key=[Redacted]' },
        res: { statusCode: 431 },
      })
    } finally {
      server.close()
    }
  })

  it("reports a malformed body's 400 on its request's own line, once", async () => {
    const line = log.next()
    const { text } = await exchange(
      app.port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\n',
      { waitMs: 5000 },
    )
    expect(text).toMatch(/^HTTP\/1\.1 400 /)
    expect((await line).msg).toBe('request completed')
    expect((await line).fields).toMatchObject({
      req: { method: 'POST', url: '/echo' },
      res: { statusCode: 400 },
    })
    // The next line is the next request's: none for the same request again.
    const next = log.next()
    expect((await get(app.port, '/ok')).status).toBe(200)
    expect((await next).fields.req.url).toBe('/ok')
  })

  it('logs no line for a connection the client reset mid-request', async () => {
    const socket = connect(app.port, '127.0.0.1', () => socket.write('GET /ok HT'))
    socket.on('error', () => {})
    await once(socket, 'connect')
    socket.resetAndDestroy()
    await once(socket, 'close')
    const next = log.next()
    expect((await get(app.port, '/ok')).status).toBe(200)
    expect((await next).fields.req.url).toBe('/ok')
  })

  it('logs CONNECT, which fw refuses (501)', async () => {
    const { answer, line } = await refused('CONNECT db.internal:5432 HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 501 /)
    expect(line.msg).toBe('request errored')
    expect(line.fields).toMatchObject({
      req: { method: 'CONNECT', url: 'db.internal:5432', remoteAddress: '127.0.0.1' },
      res: { statusCode: 501 },
    })
  })
})

describe('the credentials of a request target', () => {
  const CREDENTIALS = [
    'X-Amz-Signature=a1',
    'X-Amz-Credential=AKIA%2F20250101%2Fus-east-1',
    'X-Amz-Security-Token=t1',
    'X-Goog-Signature=g1',
    'X-Goog-Credential=c1',
    'x-amz-signature=a2',
    'sig=s1',
    'SIG=s2',
    'signature=s3',
    'access_token=t2',
    'api_key=k1',
    'apikey=k2',
    'code=oauth1',
    'client_secret=cs1',
    'password=p1',
  ]

  it('are redacted: cloud pre-signed URLs, an Azure SAS, OAuth, API keys; any case', () => {
    const target = `/x?${CREDENTIALS.join('&')}&page=2&state=s&X-Amz-Expires=300`
    const shown = redactTarget(target)
    for (const param of CREDENTIALS) expect(shown).toContain(`${param.split('=')[0]}=[Redacted]`)
    expect(shown).toMatch(/&page=2&state=s&X-Amz-Expires=300$/)
    expect(shown).not.toMatch(/a1|a2|AKIA|t1|g1|c1|s1|s2|s3|t2|k1|k2|oauth1|cs1|p1/)
  })

  it('a JWT the cut ends in is redacted, not shown up to its signature', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiIsImVtYWlsIjoiYUBiLmMifQ.c2lnbmF0dXJl'
    for (const max of [30, 50, 70]) {
      const shown = redactTarget(`/cb/${jwt}/x`, max)
      expect(shown, String(max)).toMatch(/^\/cb\/\[Redacted\]… \[\d+ more characters\]$/)
    }
    expect(redactTarget(`/cb?n=eyJ`, 8)).toBe('/cb?n=ey… [1 more characters]')
  })

  it('are redacted in the access log line', async () => {
    const line = log.next()
    const target = `/ok?${CREDENTIALS.join('&')}&page=2`
    expect((await get(app.port, target)).status).toBe(200)
    const url = (await line).fields.req.url as string
    expect(url).toBe(
      `/ok?${CREDENTIALS.map((param) => `${param.split('=')[0]}=[Redacted]`).join('&')}&page=2`,
    )
  })
})
