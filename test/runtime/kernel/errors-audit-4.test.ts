/**
 * The error boundary against what no one means to throw (audit 4): a Proxy whose traps throw, an
 * Error whose message cannot be read, an HttpError whose body or headers cannot be. Each used to
 * escape the boundary into the adapter's last-resort 500, which has no request id and logs the
 * boundary's own failure instead of the error; now the boundary answers, over real HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const unreadable = (what: string): never => {
  throw new Error(`${what} cannot be read`)
}

const routes: Register = (r) => {
  r.get('/proxy', () => {
    throw new Proxy(
      {},
      { getPrototypeOf: () => unreadable('prototype'), get: () => unreadable('field') },
    )
  })
  r.get('/message-getter', () => {
    const error = new Error('hidden')
    Object.defineProperty(error, 'message', { get: () => unreadable('message') })
    throw error
  })
  r.get('/body-getter', () => {
    throw new HttpError(422, {
      message: 'Invalid email',
      body: Object.defineProperty({}, 'field', { enumerable: true, get: () => unreadable('body') }),
    })
  })
  r.get('/headers-proxy', () => {
    throw new HttpError(400, { headers: new Proxy({}, { ownKeys: () => unreadable('headers') }) })
  })
  r.get('/ok', () => 'ok')
}

async function withServer(
  body: (
    server: Awaited<ReturnType<typeof serve>>,
    log: ReturnType<typeof captureLogger>,
  ) => Promise<void>,
): Promise<void> {
  const log = captureLogger()
  // Debug on (outside production): the boundary then reads the message and stack of a 500.
  const server = await serve(await bootKernel(routes, { log, debug: true, env: 'development' }))
  try {
    await body(server, log)
    expect((await server.send('GET', '/ok')).text).toBe('ok')
  } finally {
    await server.close()
  }
}

describe('something thrown that cannot be read', () => {
  it('a Proxy whose traps throw is the boundary 500 with its request id, logged as unhandled', async () => {
    await withServer(async (server, log) => {
      const reply = await server.send('GET', '/proxy', { headers: { 'x-request-id': 'proxy-1' } })
      expect(reply.status).toBe(500)
      expect(reply.headers['x-request-id']).toBe('proxy-1')
      expect(JSON.parse(reply.text)).toEqual({
        error: 'Internal Server Error',
        code: 500,
        request_id: 'proxy-1',
      })
      expect(log.lines.map((line) => line.msg)).toEqual(['Unhandled error'])
    })
  })

  it('an Error whose message getter throws is the boundary 500, in debug mode too', async () => {
    await withServer(async (server, log) => {
      const reply = await server.send('GET', '/message-getter', {
        headers: { 'x-request-id': 'getter-1' },
      })
      expect(reply.status).toBe(500)
      expect(JSON.parse(reply.text)).toEqual({
        error: 'Internal Server Error',
        code: 500,
        request_id: 'getter-1',
      })
      expect(log.lines.map((line) => line.msg)).toEqual(['Unhandled error'])
    })
  })
})

describe('an HttpError that cannot be rendered as it is', () => {
  it('whose body fields throw keeps its status and message, without those fields', async () => {
    await withServer(async (server) => {
      const reply = await server.send('GET', '/body-getter', { headers: { 'x-request-id': 'b-1' } })
      expect(reply.status).toBe(422)
      expect(JSON.parse(reply.text)).toEqual({
        error: 'Invalid email',
        code: 422,
        request_id: 'b-1',
      })
      expect(reply.headers['cache-control']).toBe('no-store')
    })
  })

  it('whose headers cannot be read is a 500 with its request id, and the log says why', async () => {
    await withServer(async (server, log) => {
      const reply = await server.send('GET', '/headers-proxy', {
        headers: { 'x-request-id': 'h-1' },
      })
      expect(reply.status).toBe(500)
      expect(JSON.parse(reply.text)).toEqual({
        error: 'Internal Server Error',
        code: 500,
        request_id: 'h-1',
      })
      expect(reply.headers['x-content-type-options']).toBe('nosniff')
      expect(log.lines.map((line) => line.msg)).toEqual(['The error response cannot be rendered'])
    })
  })
})
