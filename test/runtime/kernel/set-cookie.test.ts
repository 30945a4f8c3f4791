/**
 * Cookies set on responses, as a browser receives them over real HTTP: one Set-Cookie field per
 * cookie (never joined with commas, Expires has one), with their attributes; deletion; values
 * with `;`, CR or LF encoded rather than injected, and read back as they were set; every path a
 * response takes (HEAD, a stream, a 304, a web Response, middleware adding headers, the error
 * boundary) keeps them.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import { notFound } from '../../../src/runtime/http-error.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { json, noContent, stream } from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './support.js'
import { exchange } from './wire.js'

let server: Served
const log = captureLogger()

const EXPIRES = new Date(Date.UTC(2030, 0, 2, 3, 4, 5))
// What a session middleware does: its cookie on whatever the layers inside answered.
const session: Middleware = async (req, next) => (await next(req)).withCookie('session', 's1')
// A middleware adding a header of its own after the handler's cookies.
const stamp: Middleware = async (req, next) => (await next(req)).withHeader('x-stamp', '1')

beforeAll(async () => {
  const dir = tempDir('fw-set-cookie-')
  const asset = join(dir, 'asset.txt')
  writeFileSync(asset, 'asset\n')
  server = await serve(
    await bootKernel(
      (r) => {
        r.get(
          '/login',
          () =>
            json({ ok: true })
              .withCookie('sid', 'abc', { maxAge: 7200, expires: EXPIRES, secure: true })
              .withCookie('theme', 'dark', { httpOnly: false, sameSite: 'strict' }),
          { middleware: [stamp] },
        )
        r.get('/logout', () => noContent().withoutCookie('sid').withoutCookie('theme'))
        r.get('/set', (req: FwRequest) => json({}).withCookie('v', String(req.query('v'))))
        r.get('/read', (req: FwRequest) => json({ v: req.cookie('v') }))
        r.get('/stream', () =>
          stream(Readable.from(['a', 'b']))
            .withCookie('s', '1')
            .withCookie('t', '2'),
        )
        r.get('/asset', async (req: FwRequest) =>
          (await file(asset, { request: req })).withCookie('seen', '1'),
        )
        r.get(
          '/web',
          () =>
            new Response('upstream', {
              headers: [
                ['set-cookie', 'up1=1; Path=/'],
                ['set-cookie', 'up2=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT'],
              ],
            }),
          { middleware: [session] },
        )
        r.get(
          '/missing',
          () => {
            throw notFound()
          },
          { middleware: [session] },
        )
        r.get('/bad-name', () => json({}).withCookie('a b', 'x'))
        r.get('/none-insecure', () => json({}).withCookie('x', '1', { sameSite: 'none' }))
      },
      { log },
    ),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('Set-Cookie over HTTP', () => {
  const login = [
    'sid=abc; Max-Age=7200; Path=/; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Lax',
    'theme=dark; Path=/; SameSite=Strict',
  ]

  it('sends each cookie as its own field, with its attributes, past a middleware header', async () => {
    const reply = await server.send('GET', '/login')
    expect(reply.status).toBe(200)
    expect(reply.headers['set-cookie']).toEqual(login)
    expect(reply.headers['x-stamp']).toBe('1')
    // As a browser's fetch lists them.
    const fetched = await fetch(`http://127.0.0.1:${server.port}/login`)
    expect(fetched.headers.getSetCookie()).toEqual(login)
  })

  it('sends the cookies of a HEAD request too', async () => {
    const reply = await server.send('HEAD', '/login')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('')
    expect(reply.headers['set-cookie']).toEqual(login)
  })

  it('expires cookies: empty, Max-Age=0, an Expires in the past', async () => {
    const reply = await server.send('GET', '/logout')
    expect(reply.status).toBe(204)
    expect(reply.headers['set-cookie']).toEqual([
      'sid=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
      'theme=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ])
  })

  it('encodes ;, CR and LF in a value: one field, no header or attribute injected', async () => {
    const value = 'x; Domain=evil.example\r\nSet-Cookie: admin=1'
    const target = `/set?v=${encodeURIComponent(value)}`
    const answer = await exchange(
      server.port,
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    )
    const fields = answer.text.split('\r\n').filter((line) => /^set-cookie:/i.test(line))
    expect(fields).toEqual([
      'set-cookie: v=x%3B%20Domain%3Devil.example%0D%0ASet-Cookie%3A%20admin%3D1; Path=/; HttpOnly; SameSite=Lax',
    ])
    expect(answer.text).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('reads a value back as it was set, through the request Cookie header', async () => {
    const value = 'a;b c=d, é ☕ "q"'
    const set = await server.send('GET', `/set?v=${encodeURIComponent(value)}`)
    const pair = (set.headers['set-cookie'] as string[])[0]!.split(';')[0]!
    const read = await server.send('GET', '/read', { headers: { cookie: `other=1; ${pair}` } })
    expect(JSON.parse(read.text)).toEqual({ v: value })
  })

  it('keeps the cookies of a streamed body', async () => {
    const reply = await server.send('GET', '/stream')
    expect(reply.text).toBe('ab')
    expect(reply.headers['set-cookie']).toEqual([
      's=1; Path=/; HttpOnly; SameSite=Lax',
      't=2; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it('keeps the cookies of a 304', async () => {
    const first = await server.send('GET', '/asset')
    const etag = first.headers.etag as string
    const reply = await server.send('GET', '/asset', { headers: { 'if-none-match': etag } })
    expect(reply.status).toBe(304)
    expect(reply.headers['set-cookie']).toEqual(['seen=1; Path=/; HttpOnly; SameSite=Lax'])
  })

  it("adds a middleware's cookie to a web Response's own, each its own field", async () => {
    const reply = await server.send('GET', '/web')
    expect(reply.text).toBe('upstream')
    expect(reply.headers['set-cookie']).toEqual([
      'up1=1; Path=/',
      'up2=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT',
      'session=s1; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it("adds a middleware's cookie to the error answer of the layers inside it", async () => {
    const reply = await server.send('GET', '/missing')
    expect(reply.status).toBe(404)
    expect(JSON.parse(reply.text)).toMatchObject({ error: 'Not Found', code: 404 })
    expect(reply.headers['set-cookie']).toEqual(['session=s1; Path=/; HttpOnly; SameSite=Lax'])
  })

  it('answers a cookie browsers would drop, or a bad name, with a 500 and no cookie', async () => {
    const cases = {
      '/bad-name': /^withCookie\("a b"\): a cookie name is letters, digits/,
      '/none-insecure': /^withCookie\("x"\): sameSite 'none' needs secure: true/,
    }
    for (const [path, message] of Object.entries(cases)) {
      const reply = await server.send('GET', path)
      expect(reply.status, path).toBe(500)
      expect(JSON.parse(reply.text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
      expect(reply.headers['set-cookie'], path).toBeUndefined()
      // The log says what was wrong, the client only that something was.
      const logged = log.lines.filter((line) => (line.obj as { path?: string }).path === path)
      expect(logged.map((line) => (line.obj as { err: Error }).err.message)).toEqual([
        expect.stringMatching(message),
      ])
      expect(reply.text).not.toContain('withCookie')
    }
  })
})
