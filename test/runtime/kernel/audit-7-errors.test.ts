/**
 * The error boundary (audit 7), over real HTTP. Its content negotiation against a hostile Accept:
 * every error answer, any 404 included, reads Accept, and a 16 KiB header of empty or
 * parameter-laden ranges cost ~6 ms of CPU per answer, so a client could keep a core busy with a
 * few hundred requests a second; only the first 32 ranges count now, as in `negotiate`. And its
 * log line for a thrown undefined, Symbol or function, which said nothing about what was thrown.
 */
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { renderError } from '../../../src/runtime/error-boundary.js'
import { HttpError, notFound } from '../../../src/runtime/http-error.js'
import { createLogger, silentLogger } from '../../../src/runtime/logger.js'
import { bootKernel, cleanupTempDirs, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/missing-thing', () => {
    throw notFound('No such thing')
  })
  r.get('/reject-nothing', () => Promise.reject())
  r.get('/symbol', () => {
    throw Symbol('cache miss')
  })
  r.get('/function', () => {
    throw () => 1
  })
  r.get('/ok', () => 'ok')
}

// Node's default limit for all request headers is 16 KiB.
const COMMAS = ','.repeat(15_000)
const SEMICOLONS = `text/plain${';'.repeat(15_000)}`

describe('an error answer to a hostile Accept', () => {
  it('weighs only the first 32 ranges, as negotiate does, over HTTP', async () => {
    const server = await serve(await bootKernel(routes))
    try {
      const junk = Array.from({ length: 32 }, (_, i) => `x/y${i}`).join(', ')
      const late = await server.send('GET', '/missing-thing', {
        headers: { accept: `${junk}, text/plain` },
      })
      expect(late.status).toBe(404)
      expect(late.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(JSON.parse(late.text)).toMatchObject({ error: 'No such thing', code: 404 })

      // Within the first 32, as before; a range of 15,000 ';' keeps its type.
      const early = await server.send('GET', '/nowhere', {
        headers: { accept: `${junk.split(', ').slice(1).join(', ')}, text/plain` },
      })
      expect(early.headers['content-type']).toBe('text/plain; charset=utf-8')
      expect(early.text).toBe('Not Found\n')
      const semicolons = await server.send('GET', '/nowhere', { headers: { accept: SEMICOLONS } })
      expect(semicolons.headers['content-type']).toBe('text/plain; charset=utf-8')

      const commas = await server.send('GET', '/nowhere', { headers: { accept: COMMAS } })
      expect(commas.status).toBe(404)
      expect(commas.headers['content-type']).toBe('application/json; charset=utf-8')
      expect((await server.send('GET', '/ok')).text).toBe('ok')
    } finally {
      await server.close()
    }
  })

  // Its cost (~6 ms each before, far under 1 ms now) is for the benchmarks; what a client sees
  // is the answer a short header with the same first ranges gets.
  it('answers as a short header with the same ranges does', () => {
    const context = (accept: string) => ({
      accept,
      path: '/x',
      requestId: 'id',
      debug: false,
      log: silentLogger,
    })
    const answer = (accept: string) => {
      const response = renderError(new HttpError(404), context(accept))
      return [response.status, response.header('content-type'), response.body]
    }
    expect(answer(COMMAS)).toEqual(answer(','))
    expect(answer(COMMAS)[1]).toBe('application/json; charset=utf-8')
    expect(answer(SEMICOLONS)).toEqual(answer('text/plain;'))
    expect(answer(SEMICOLONS)[1]).toBe('text/plain; charset=utf-8')
  })
})

describe('the log line of a thrown value JSON cannot show', () => {
  it('says what was thrown: undefined, a Symbol, a function', async () => {
    let written = ''
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk)
        done()
      },
    })
    const log = createLogger('production', 'info', sink)
    const server = await serve(await bootKernel(routes, { log }))
    try {
      for (const path of ['/reject-nothing', '/symbol', '/function']) {
        const answer = await server.send('GET', path, { headers: { 'x-request-id': 'r-1' } })
        expect(answer.status).toBe(500)
        expect(JSON.parse(answer.text)).toEqual({
          error: 'Internal Server Error',
          code: 500,
          request_id: 'r-1',
        })
      }
    } finally {
      await server.close()
    }
    const lines = written
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map(({ level, msg, err, path }) => ({ level, msg, err, path }))).toEqual([
      { level: 50, msg: 'Unhandled error', err: 'undefined', path: '/reject-nothing' },
      { level: 50, msg: 'Unhandled error', err: 'Symbol(cache miss)', path: '/symbol' },
      { level: 50, msg: 'Unhandled error', err: '[a function]', path: '/function' },
    ])
  })
})
