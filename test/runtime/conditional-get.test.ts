/**
 * Conditional GET for handler responses (as Express's res.send answers through `fresh`): a 200 to
 * a GET or HEAD that carries the handler's own ETag or Last-Modified is answered 304 Not Modified,
 * without a body, when the client's If-None-Match (weak comparison, `*`, a list) or, without it,
 * If-Modified-Since says its copy is fresh; never with Cache-Control: no-cache, never for another
 * method or status. The 304 keeps the caching headers and drops the body's. Over real HTTP.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../src/runtime/file.js'
import { create, json, stream } from '../../src/runtime/response.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'
import { tempDir } from '../support/compile.js'
import { utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const MODIFIED = 'Tue, 01 Apr 2025 10:00:00 GMT'
const CACHING = { 'cache-control': 'private, max-age=60', vary: 'Accept-Language' }

// The streamed bodies handed out, to see each was closed unread after a 304.
const streams: Readable[] = []
let pulls = 0

let app: Served
let photo = ''

beforeAll(async () => {
  photo = join(tempDir('fw-conditional-'), 'photo.txt')
  writeFileSync(photo, 'pixels')
  utimesSync(photo, new Date('2025-04-01T10:00:00Z'), new Date('2025-04-01T10:00:00Z'))
  const kernel = await bootKernel((r) => {
    r.get('/strong', () => json({ v: 7 }, 200, { etag: '"v7"', ...CACHING }))
    r.get('/weak', () => json({ v: 7 }, 200, { etag: 'W/"v7"' }))
    r.get('/comma', () => create('text', 200, { etag: '"a,b"' }))
    r.get('/dated', () => create('text', 200, { 'last-modified': MODIFIED }))
    r.get('/both', () => create('text', 200, { etag: '"v7"', 'last-modified': MODIFIED }))
    r.get('/plain', () => json({ v: 7 }))
    r.get('/created', () => json({ v: 7 }, 201, { etag: '"v7"' }))
    r.post('/strong', () => json({ v: 7 }, 200, { etag: '"v7"' }))
    r.get('/file', () => file(photo))
    r.get('/stream', () => {
      const body = new Readable({
        read() {
          pulls++
          this.push('chunk')
          this.push(null)
        },
      })
      streams.push(body)
      return stream(body, 200, { etag: '"s1"', 'content-type': 'text/plain' })
    })
  })
  app = await serve(kernel)
})

afterAll(async () => {
  await app.close()
  cleanupTempDirs()
})

const ifNoneMatch = (tag: string): { headers: Record<string, string> } => ({
  headers: { 'if-none-match': tag },
})

describe('a 200 with the handler’s ETag', () => {
  it('is a 304 without a body when If-None-Match names it, with the caching headers', async () => {
    const full = await app.send('GET', '/strong')
    expect(full.status).toBe(200)
    expect(full.text).toBe('{"v":7}')

    const answer = await app.send('GET', '/strong', ifNoneMatch('"v7"'))
    expect(answer.status).toBe(304)
    expect(answer.text).toBe('')
    expect(answer.headers).toMatchObject({ etag: '"v7"', ...CACHING, vary: 'Accept-Language' })
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.headers.date).toBeDefined()
    expect(answer.headers['content-type']).toBeUndefined()
    expect(answer.headers['content-length']).toBeUndefined()

    // A response without a validator is left alone, even for `*`.
    const plain = await app.send('GET', '/plain', {
      headers: { 'if-none-match': '*', 'if-modified-since': MODIFIED },
    })
    expect(plain.status).toBe(200)
    expect(plain.text).toBe('{"v":7}')
  })

  it('compares weakly, reads a list, takes * and a comma inside a tag', async () => {
    expect((await app.send('GET', '/weak', ifNoneMatch('"v7"'))).status).toBe(304)
    expect((await app.send('GET', '/strong', ifNoneMatch('W/"v7"'))).status).toBe(304)
    expect((await app.send('GET', '/strong', ifNoneMatch('"a", W/"v7" ,"b"'))).status).toBe(304)
    expect((await app.send('GET', '/strong', ifNoneMatch('*'))).status).toBe(304)
    expect((await app.send('GET', '/comma', ifNoneMatch('"a,b"'))).status).toBe(304)
    expect((await app.send('GET', '/comma', ifNoneMatch('"a"'))).status).toBe(200)
    const stale = await app.send('GET', '/strong', ifNoneMatch('"v6", "v8"'))
    expect(stale.status).toBe(200)
    expect(stale.text).toBe('{"v":7}')
  })

  it('answers HEAD too, but no other method, no other status, no Cache-Control: no-cache', async () => {
    expect((await app.send('HEAD', '/strong', ifNoneMatch('"v7"'))).status).toBe(304)
    expect((await app.send('POST', '/strong', ifNoneMatch('"v7"'))).status).toBe(200)
    expect((await app.send('GET', '/created', ifNoneMatch('"v7"'))).status).toBe(201)
    const reload = await app.send('GET', '/strong', {
      headers: { 'if-none-match': '"v7"', 'cache-control': 'max-age=0, No-Cache' },
    })
    expect(reload.status).toBe(200)
    expect(reload.text).toBe('{"v":7}')
  })
})

describe('a 200 with the handler’s Last-Modified', () => {
  it('is a 304 for If-Modified-Since at or after it; a 200 before it, or for no valid date', async () => {
    const since = (date: string) => ({ headers: { 'if-modified-since': date } })
    expect((await app.send('GET', '/dated', since(MODIFIED))).status).toBe(304)
    expect((await app.send('GET', '/dated', since('Wed, 02 Apr 2025 10:00:00 GMT'))).status).toBe(
      304,
    )
    const older = await app.send('GET', '/dated', since('Mon, 31 Mar 2025 10:00:00 GMT'))
    expect(older.status).toBe(200)
    expect(older.text).toBe('text')
    // One that is no date, or later than now, is ignored.
    expect((await app.send('GET', '/dated', since('yesterday'))).status).toBe(200)
    expect((await app.send('GET', '/dated', since('Fri, 01 Jan 2100 00:00:00 GMT'))).status).toBe(
      200,
    )
  })

  it('gives If-None-Match precedence over If-Modified-Since', async () => {
    const answer = await app.send('GET', '/both', {
      headers: { 'if-none-match': '"other"', 'if-modified-since': MODIFIED },
    })
    expect(answer.status).toBe(200)
    expect(answer.text).toBe('text')
    const matched = await app.send('GET', '/both', {
      headers: { 'if-none-match': '"v7"', 'if-modified-since': 'Mon, 31 Mar 2025 10:00:00 GMT' },
    })
    expect(matched.status).toBe(304)
  })

  it('answers a file() given without its request as well', async () => {
    const answer = await app.send('GET', '/file', { headers: { 'if-modified-since': MODIFIED } })
    expect(answer.status).toBe(304)
    expect(answer.text).toBe('')
    expect(answer.headers['last-modified']).toBe(MODIFIED)
  })
})

describe('a streamed 200 with an ETag', () => {
  it('is a 304 that closes the stream unread, and streams in full otherwise', async () => {
    const answer = await app.send('GET', '/stream', ifNoneMatch('"s1"'))
    expect(answer.status).toBe(304)
    expect(answer.text).toBe('')
    expect(streams.at(-1)!.destroyed).toBe(true)
    expect(pulls).toBe(0)

    const full = await app.send('GET', '/stream')
    expect(full.status).toBe(200)
    expect(full.text).toBe('chunk')
  })
})
