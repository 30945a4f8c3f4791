/**
 * A middleware that answers something other than a response (a forgotten `return`, a plain
 * object) and a custom error renderer that does: the request gets the error boundary's 500, the
 * log names the problem, and the server keeps serving. It used to crash the process (a throw in
 * the fulfilment handler of the request-id reaction, caught by nobody).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { ErrorRenderer } from '../../../src/runtime/error-boundary.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import type { FwResponse } from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import {
  bootKernel,
  call,
  captureLogger,
  cleanupTempDirs,
  jsonOf,
  serve,
  type Register,
  type Served,
} from './support.js'

afterAll(cleanupTempDirs)

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
process.on('unhandledRejection', onUnhandled)
afterAll(() => void process.off('unhandledRejection', onUnhandled))

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const forgotReturn = async function forgotReturn(
  request: FwRequest,
  next: (request: FwRequest) => Promise<FwResponse>,
): Promise<void> {
  await next(request)
} as unknown as Middleware
const plainObject: Middleware = function plainObject() {
  return { not: 'a response' }
} as unknown as Middleware

const routes: Register = (r) => {
  r.get('/ok', () => ({ ok: true }))
  r.get('/forgot', () => 'x').withMiddleware(forgotReturn)
  r.get('/object', () => 'x').withMiddleware(plainObject)
}

/** The error boundary's 500 as a client sees it. */
function expectBoundary500(reply: Awaited<ReturnType<Served['send']>>): void {
  expect(reply.status).toBe(500)
  expect(reply.headers['cache-control']).toBe('no-store')
  expect(reply.headers['x-content-type-options']).toBe('nosniff')
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
  const id = reply.headers['x-request-id']
  expect(id).toMatch(/^[0-9a-f-]{36}$/)
  expect(JSON.parse(reply.text)).toEqual({
    error: 'Internal Server Error',
    code: 500,
    request_id: id,
  })
}

function loggedMessages(log: ReturnType<typeof captureLogger>): string[] {
  return log.lines
    .filter((line) => line.level === 'error')
    .map((line) => (line.obj as { err?: Error }).err?.message ?? '')
}

describe('a middleware that returns no response', () => {
  it('answers the boundary 500 over HTTP, logs the problem and keeps serving', async () => {
    const log = captureLogger()
    served = await serve(await bootKernel(routes, { log }))
    expectBoundary500(await served.send('GET', '/forgot'))
    expect(loggedMessages(log)).toContainEqual(
      expect.stringContaining('Middleware "forgotReturn" returned undefined instead of a response'),
    )
    // The process is still up and the server answers the next request.
    const next = await served.send('GET', '/ok')
    expect({ status: next.status, body: JSON.parse(next.text) }).toEqual({
      status: 200,
      body: { ok: true },
    })
    expect(unhandled).toEqual([])
  })

  it('answers a synchronous middleware returning a plain object the same way', async () => {
    const log = captureLogger()
    served = await serve(await bootKernel(routes, { log }))
    expectBoundary500(await served.send('GET', '/object'))
    expect(loggedMessages(log)).toContainEqual(
      expect.stringContaining('Middleware "plainObject" returned an object (Object)'),
    )
  })

  it('lets an outer middleware see the 500 instead of undefined', async () => {
    const seen: number[] = []
    const outer: Middleware = async (request, next) => {
      const response = await next(request)
      seen.push(response.status)
      return response.withHeader('x-outer', 'yes')
    }
    const kernel = await bootKernel(routes, { preGlobal: [outer] })
    const response = await call(kernel, '/forgot')
    expect(seen).toEqual([500])
    expect(response.header('x-outer')).toBe('yes')
  })

  it('makes kernel.handle() resolve with the 500 (it never rejects)', async () => {
    const kernel = await bootKernel(routes)
    for (const builtins of [true, false]) {
      const k = builtins ? kernel : await bootKernel(routes, { builtins: false })
      const response = await call(k, '/forgot')
      expect(response.status).toBe(500)
      expect(response.header('cache-control')).toBe('no-store')
    }
  })

  it('awaits a foreign thenable returned synchronously', async () => {
    const thenable: Middleware = ((request: never, next: (r: never) => Promise<FwResponse>) => ({
      then: (resolve: (r: FwResponse) => void, reject: (e: unknown) => void) =>
        next(request).then((response) => resolve(response.withHeader('x-thenable', '1')), reject),
    })) as unknown as Middleware
    const kernel = await bootKernel((r) => r.get('/t', () => 'ok').withMiddleware(thenable))
    const response = await call(kernel, '/t')
    expect(response.status).toBe(200)
    expect(response.header('x-thenable')).toBe('1')
  })
})

describe('a custom error renderer that returns no response', () => {
  it('falls back to the default rendering over HTTP, and logs it', async () => {
    const log = captureLogger()
    const errorRenderer = (() => undefined) as unknown as ErrorRenderer
    const kernel = await bootKernel(
      (r) => {
        r.get('/crash', () => {
          throw new Error('boom')
        })
        r.get('/ok', () => 'fine')
      },
      { errorRenderer, log },
    )
    served = await serve(kernel)
    expectBoundary500(await served.send('GET', '/crash'))
    expect(loggedMessages(log)).toContainEqual(
      expect.stringContaining(
        'The custom error renderer returned undefined instead of a response: return an FwResponse',
      ),
    )
    expect((await served.send('GET', '/ok')).text).toBe('fine')
    // In process too: a 404 rendered by default.
    const missing = await call(kernel, '/nowhere')
    expect({ status: missing.status, body: await jsonOf(missing) }).toMatchObject({
      status: 404,
      body: { error: 'Not Found', code: 404 },
    })
    expect(unhandled).toEqual([])
  })
})
