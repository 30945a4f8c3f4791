/**
 * `await next()` without the request (the habit Koa and Hono teach): the next layer got
 * `undefined` and failed on it (`Cannot read properties of undefined (reading 'isBodyLoaded')`),
 * so the log named neither the slip nor where it was. Now the call to next() itself throws a
 * TypeError saying so, which the calling middleware's guard rescues with its own request: the
 * client gets the boundary's 500 with its request id, the log says what to write instead.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Middleware } from '../../../src/runtime/types.js'
import {
  bootKernel,
  captureLogger,
  cleanupTempDirs,
  serve,
  type Register,
  type Served,
} from './support.js'

afterAll(cleanupTempDirs)

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const koaHabit = (async (_request, next) => (next as () => ReturnType<typeof next>)()) as Middleware
const syncHabit = ((_request, next) => (next as () => ReturnType<typeof next>)()) as Middleware
// Something else than the request: a context object of its own.
const ownObject = ((_request, next) => next({ fake: true } as never)) as Middleware
const passOn: Middleware = function passOn(request, next) {
  return next(request)
}

const routes: Register = (r) => {
  r.get('/ok', () => ({ ok: true }))
  r.get('/async', () => 'x').withMiddleware(koaHabit)
  r.get('/sync', () => 'x').withMiddleware(syncHabit)
  r.get('/before-named', () => 'x').withMiddleware([koaHabit, passOn])
  r.get('/object', () => 'x').withMiddleware(ownObject)
}

describe('a middleware calling next() without the request', () => {
  it.each([
    ['/async', 'without the request', 'the handler'],
    ['/sync', 'without the request', 'the handler'],
    ['/before-named', 'without the request', 'middleware "passOn"'],
    // It failed in the next layer: 'request.isBodyLoaded is not a function'.
    ['/object', 'with an object that is not the request', 'the handler'],
  ])(
    '%s: the boundary 500 with the request id, and a log line naming the slip',
    async (path, slip, before) => {
      const log = captureLogger()
      served = await serve(await bootKernel(routes, { log }))
      const reply = await served.send('GET', path)
      expect(reply.status).toBe(500)
      const id = reply.headers['x-request-id']
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
      expect(JSON.parse(reply.text)).toEqual({
        error: 'Internal Server Error',
        code: 500,
        request_id: id,
      })
      const logged = log.lines
        .filter((line) => line.level === 'error')
        .map((line) => (line.obj as { err?: Error }).err?.message)
      expect(logged).toEqual([
        `A middleware called next() ${slip} (before ${before}): pass it on, next(request)`,
      ])
      const next = await served.send('GET', '/ok')
      expect(next.status).toBe(200)
    },
  )
})
