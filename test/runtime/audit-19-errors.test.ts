/**
 * Regressions of API audit 19. From JavaScript, a header map put where a typed error's options go
 * (`badRequest('m', { 'x-err': 'h' })`) was dropped without a word; `methodNotAllowed` with its
 * arguments swapped sent `Allow: Nope` and the body "[object Object]"; and `signedUrlFor` signed
 * a URL already expired when given a ttl under a second, which `temporaryUrlFor` refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as errors from '../../src/runtime/http-error.js'
import { badRequest, HttpError, methodNotAllowed } from '../../src/runtime/http-error.js'
import type { Kernel } from '../../src/runtime/kernel.js'
import { bootKernel, captureLogger, cleanupTempDirs, serve, type Served } from './kernel/support.js'

/** The factories as a JavaScript caller sees them: no type stops a wrong options object. */
type Loose = (message?: unknown, options?: unknown) => HttpError
const loose = (factory: unknown): Loose => factory as Loose

const FACTORIES = [
  'badRequest',
  'unauthorized',
  'forbidden',
  'notFound',
  'conflict',
  'gone',
  'payloadTooLarge',
  'unsupportedMediaType',
  'unprocessable',
  'tooManyRequests',
  'internalError',
  'serviceUnavailable',
] as const

const log = captureLogger()
/** The error the boundary logged for the last 500, as `TypeError: message`. */
const loggedError = (): string =>
  String((log.lines.find((l) => l.level === 'error')?.obj as { err?: unknown } | undefined)?.err)
let kernel: Kernel
let server: Served

beforeAll(async () => {
  kernel = await bootKernel(
    (r) => {
      r.get('/header-map', () => {
        throw loose(badRequest)('Bad input', { 'x-err': 'h' })
      })
      r.get('/headers', () => {
        throw badRequest('Bad input', { headers: { 'x-err': 'h' } })
      })
      r.get('/swapped', () => {
        throw (methodNotAllowed as (...args: unknown[]) => HttpError)('Nope', { allow: 'GET' })
      })
      r.get('/not-allowed', () => {
        throw methodNotAllowed('GET, HEAD', 'Read only')
      })
      r.get('/files/{id:int}', () => ({ ok: true }), {
        name: 'files.show',
        middleware: ['verifySignedUrl'],
      })
    },
    { log },
  )
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('typed error options', () => {
  it('refuses a header map given as the options, naming its keys, instead of dropping it', async () => {
    log.lines.length = 0
    const reply = await server.send('GET', '/header-map')
    expect(reply.status).toBe(500)
    expect(loggedError()).toMatch(/^TypeError: .*x-err.*\{ headers: \{\.\.\.\} \}/)

    const valid = await server.send('GET', '/headers')
    expect([valid.status, valid.headers['x-err']]).toEqual([400, 'h'])
    expect(JSON.parse(valid.text)).toMatchObject({ error: 'Bad input', code: 400 })
  })

  it('throws a TypeError from every factory for unknown option keys, and takes the known ones', () => {
    for (const name of FACTORIES) {
      const factory = loose(errors[name])
      expect(() => factory('m', { 'x-err': 'h', retry: 1 })).toThrow(
        /x-err, retry.*\{ headers: \{\.\.\.\} \}/,
      )
      const cause = new Error('why')
      const error = factory('m', { headers: { 'x-a': 'b' }, expose: true, cause, body: { n: 1 } })
      expect([error.message, error.headers, error.expose, error.cause]).toEqual([
        'm',
        { 'x-a': 'b' },
        true,
        cause,
      ])
      expect(factory().status).toBe(factory(undefined, {}).status)
      expect(factory('m', null).message).toBe('m')
    }
  })
})

describe('methodNotAllowed arguments', () => {
  const CALL = "methodNotAllowed(['GET', 'HEAD'], 'message')"
  const call = methodNotAllowed as (...args: unknown[]) => HttpError

  it('answers swapped arguments with a TypeError (500), not Allow: Nope', async () => {
    log.lines.length = 0
    const reply = await server.send('GET', '/swapped')
    expect(reply.status).toBe(500)
    expect(reply.headers.allow).toBeUndefined()
    expect(loggedError()).toMatch(/^TypeError: /)
    expect(loggedError()).toContain(CALL)

    const valid = await server.send('GET', '/not-allowed')
    expect([valid.status, valid.headers.allow]).toEqual([405, 'GET, HEAD'])
    expect(JSON.parse(valid.text)).toMatchObject({ error: 'Read only', code: 405 })
    // The kernel's own 405 passes the router's list.
    const routed = await server.send('DELETE', '/headers')
    expect(routed.status).toBe(405)
    expect(routed.headers.allow).toMatch(/^GET\b/)
  })

  it('throws a TypeError naming the expected call for what are not method tokens', () => {
    expect(() => call('Nope', { allow: 'GET' })).toThrow(TypeError)
    expect(() => call('Nope', { allow: 'GET' })).toThrow(CALL)
    expect(() => call({ allow: 'GET' })).toThrow(CALL)
    expect(() => call(['GET', 7])).toThrow(CALL)
    expect(() => call(['GET HEAD'])).toThrow(CALL)
    expect(() => call('GET; HEAD')).toThrow(CALL)
    expect(() => call(['GET'], 405)).toThrow(CALL)
    expect(methodNotAllowed(['GET', 'PURGE'], 'No').headers).toEqual({ allow: 'GET, PURGE' })
    expect(methodNotAllowed('GET,HEAD').headers).toEqual({ allow: 'GET, HEAD' })
    expect(methodNotAllowed().headers).toEqual({ allow: '' })
  })
})

describe('signedUrlFor ttl', () => {
  it('refuses a ttl under a second as temporaryUrlFor does, and keeps null (no expiry)', async () => {
    const signer = kernel.signer
    for (const ttl of [0, -60, -0.5, 0.5]) {
      expect(() => signer.signedUrlFor('files.show', { id: 1 }, {}, ttl)).toThrow(RangeError)
      expect(() => signer.temporaryUrlFor('files.show', { id: 1 }, {}, ttl)).toThrow(RangeError)
    }
    const forever = signer.signedUrlFor('files.show', { id: 1 }, {}, null)
    expect(forever).not.toContain('_exp=')
    expect((await server.send('GET', forever)).status).toBe(200)
    const timed = signer.signedUrlFor('files.show', { id: 1 }, {}, 60)
    expect(timed).toContain('_exp=')
    expect((await server.send('GET', timed)).status).toBe(200)
  })
})
