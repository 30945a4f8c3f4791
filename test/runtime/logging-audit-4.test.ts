/**
 * What the logs of a failing request hold (audit 4), read as the JSON lines the default pino
 * logger writes: credentials an error carries are redacted, and an error pino cannot serialize
 * (frozen, a message getter that throws) is still logged, described, instead of its line being
 * lost. Requests go over real HTTP.
 */
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../src/runtime/http-error.js'
import { createLogger } from '../../src/runtime/logger.js'
import type { Logger } from '../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, lineSink, serve, type Register } from './kernel/support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/upstream', () => {
    // What an HTTP client library's error carries (axios: config.headers; got: options.headers).
    throw Object.assign(new Error('Upstream answered 401'), {
      config: { url: '/v1/charge', headers: { Authorization: 'Bearer sk-live-SECRET1' } },
      body: { password: 'hunter2-SECRET2', api_key: 'SECRET3' },
    })
  })
  r.get('/session', () => {
    throw new HttpError(503, {
      message: 'Session store down',
      headers: { 'Set-Cookie': 'sid=SECRET4; HttpOnly', 'retry-after': '5' },
    })
  })
  r.get('/frozen', () => {
    throw Object.freeze(new Error('frozen failure\r\n{"level":60}\u001b[2J'))
  })
  r.get('/ok', () => 'ok')
}

async function withServer(
  log: Logger,
  body: (server: Awaited<ReturnType<typeof serve>>) => Promise<void>,
): Promise<void> {
  const server = await serve(await bootKernel(routes, { log }))
  try {
    await body(server)
    expect((await server.send('GET', '/ok')).text).toBe('ok')
  } finally {
    await server.close()
  }
}

describe('the default logger', () => {
  it('redacts the credentials a logged error carries: headers, passwords, keys', async () => {
    const sink = lineSink()
    await withServer(createLogger('production', 'info', sink.stream), async (server) => {
      expect((await server.send('GET', '/upstream')).status).toBe(500)
      const session = await server.send('GET', '/session', { headers: { 'x-request-id': 's-1' } })
      expect(session.status).toBe(503)
    })
    const [upstream, session] = sink.lines()
    expect(JSON.stringify(sink.lines())).not.toMatch(/SECRET/)
    expect(upstream).toMatchObject({
      level: 50,
      msg: 'Unhandled error',
      path: '/upstream',
      err: {
        type: 'Error',
        message: 'Upstream answered 401',
        config: { url: '/v1/charge', headers: { Authorization: '[Redacted]' } },
        body: { password: '[Redacted]', api_key: '[Redacted]' },
      },
    })
    expect(upstream!.err.stack).toMatch(/^Error: Upstream answered 401\n/)
    expect(session).toMatchObject({
      msg: 'Session store down',
      request_id: 's-1',
      err: { type: 'HttpError', headers: { 'Set-Cookie': '[Redacted]', 'retry-after': '5' } },
    })
  })

  it('logs an error it cannot serialize (frozen) with its message and stack, escaped', async () => {
    const sink = lineSink()
    await withServer(createLogger('production', 'info', sink.stream), async (server) => {
      expect((await server.send('GET', '/frozen')).status).toBe(500)
    })
    const lines = sink.lines()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      msg: 'Unhandled error',
      path: '/frozen',
      err: { message: 'frozen failure\r\n{"level":60}\u001b[2J' },
    })
    expect(lines[0]!.err.stack).toMatch(/^Error: frozen failure/)
  })
})

describe('a logger of your own', () => {
  it('that cannot serialize the error still gets the line, with the error described', async () => {
    const sink = lineSink()
    // A pino of the app's own, without fw's serializer: pino's throws on a frozen error.
    await withServer(pino(sink.stream), async (server) => {
      expect((await server.send('GET', '/frozen')).status).toBe(500)
    })
    const lines = sink.lines()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ msg: 'Unhandled error', path: '/frozen' })
    expect(lines[0]!.err.message).toBe('frozen failure\r\n{"level":60}\u001b[2J')
  })
})
