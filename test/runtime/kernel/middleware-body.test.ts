/**
 * The body is read just before the handler: a middleware that reads it awaits loadBody() first,
 * as the README shows. One that does not gets the boundary's 500, and the log says why and what
 * to do (it named loadBody() but not that middleware run before the kernel loads the body).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Middleware } from '../../../src/runtime/types.js'
import { forbidden } from '../../../src/runtime/http-error.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './support.js'

const log = captureLogger()
let server: Served

const csrf: Middleware = async (req, next) => {
  await req.loadBody()
  if (req.input('_token') !== 'secret') throw forbidden('Bad CSRF token')
  return next(req)
}
// The README's CSRF guard, as written there.
const readmeCsrf: Middleware = async (req, next) => {
  await req.loadBody() // read now, under the body limits; later reads are synchronous
  const sent = req.input('_token')
  const expected = req.cookie('csrf')
  // Both there and equal: a form without the field and a browser without the cookie do not match
  if (typeof sent !== 'string' || sent === '' || sent !== expected)
    throw forbidden('Bad CSRF token')
  return next(req)
}
const careless: Middleware = (req, next) => next(req.withAttribute('flagged', req.has('x')))

beforeAll(async () => {
  const kernel = await bootKernel(
    (r) => {
      r.post('/guarded', (req) => ({ got: req.input('value') }), { middleware: [csrf] })
      r.post('/careless', () => 'ok', { middleware: [careless] })
      r.post('/form', () => 'ok', { middleware: [readmeCsrf] })
    },
    { log },
  )
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

const json = (body: object) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})

describe('a middleware reading the body', () => {
  it('reads it after awaiting loadBody(), and the handler reads it too', async () => {
    const ok = await server.send('POST', '/guarded', json({ _token: 'secret', value: 7 }))
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.text)).toEqual({ got: 7 })
    const refused = await server.send('POST', '/guarded', json({ _token: 'guess' }))
    expect(refused.status).toBe(403)
  })

  it('without loadBody() is a 500, and the log says to await it before the handler', async () => {
    const reply = await server.send('POST', '/careless', json({ x: 1 }))
    expect(reply.status).toBe(500)
    expect(reply.text).not.toContain('loadBody')
    const logged = log.lines.find((line) => line.level === 'error')
    const err = (logged?.obj as { err?: Error } | undefined)?.err
    expect(err?.message).toBe(
      'The request body is not loaded yet: await request.loadBody() before reading it (the kernel loads it just before the handler, after the middleware)',
    )
  })

  it("the README's CSRF guard passes a matching token and cookie only", async () => {
    const form = (body: string, cookie?: string) => ({
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(cookie === undefined ? {} : { cookie }),
      },
      body,
    })
    const status = async (body: string, cookie?: string) =>
      (await server.send('POST', '/form', form(body, cookie))).status
    expect(await status('_token=t1', 'csrf=t1')).toBe(200)
    expect(await status('_token=t2', 'csrf=t1')).toBe(403)
    // A forged form from a browser that has no csrf cookie: neither is there.
    expect(await status('other=1')).toBe(403)
    expect(await status('_token=', 'csrf=')).toBe(403)
    expect(await status('_token=t1')).toBe(403)
  })
})
