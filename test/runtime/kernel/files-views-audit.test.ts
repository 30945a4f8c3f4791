/**
 * Audit of file() and views over real HTTP: what a cache, a download manager or a browser sees.
 * Regressions: a suffix range longer than the file was a 416 (RFC 9110 §14.1.2: the whole file);
 * an ETag or Last-Modified given in `headers` was sent but conditional requests were checked
 * against the computed ones (If-Match with the ETag the client got was a 412); a conditional
 * date that is no HTTP-date (`If-Unmodified-Since: 1`) was read as a year.
 */
import { utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { view } from '../../../src/runtime/response.js'
import { TemplateViews } from '../../../src/runtime/views.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

const BODY = '0123456789abcdefghij' // 20 bytes
const MODIFIED = new Date('2024-01-02T03:04:05Z')
const LAST_MODIFIED = MODIFIED.toUTCString()

let server: Served

beforeAll(async () => {
  const path = join(tempDir('fw-files-views-'), 'a.txt')
  writeFileSync(path, BODY)
  utimesSync(path, MODIFIED, MODIFIED)
  const views = new TemplateViews({
    templates: {
      page: `<p title="{{ v }}" data-v='{{ v }}'>{{ v }}</p>{{ constructor }}{{ n }}`,
      odd: `[{{ fn }}][{{{ fn }}}][{{ bare }}][{{ ok }}]`,
    },
  })
  server = await serve(
    await bootKernel(
      (r) => {
        r.get('/file', (req: FwRequest) => file(path, { request: req }))
        r.get('/tagged', (req: FwRequest) =>
          file(path, {
            request: req,
            headers: { ETag: '"v1"', 'Last-Modified': 'Mon, 01 Jan 2024 00:00:00 GMT' },
          }),
        )
        r.get('/page', (req: FwRequest) => view('page', { v: req.query('v'), n: 0 }))
        r.get('/download', (req: FwRequest) => file(path, { download: req.query('as') as string }))
        r.get('/odd', () =>
          view('odd', {
            fn: function secret() {
              return 'API_KEY=abc'
            },
            bare: Object.create(null) as object,
            ok: 'fine',
          }),
        )
      },
      { views },
    ),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('file() byte ranges', () => {
  it('answers a suffix range longer than the file with the whole file as 206, not 416', async () => {
    for (const range of ['bytes=-21', 'bytes=-100']) {
      const reply = await server.send('GET', '/file', { headers: { range } })
      expect(reply.status, range).toBe(206)
      expect(reply.headers['content-range'], range).toBe('bytes 0-19/20')
      expect(reply.headers['content-length'], range).toBe('20')
      expect(reply.text, range).toBe(BODY)
    }
    const tail = await server.send('GET', '/file', { headers: { range: 'bytes=-5' } })
    expect([tail.status, tail.headers['content-range'], tail.text]).toEqual([
      206,
      'bytes 15-19/20',
      'fghij',
    ])
    const past = await server.send('GET', '/file', { headers: { range: 'bytes=20-' } })
    expect([past.status, past.headers['content-range']]).toEqual([416, 'bytes */20'])
  })
})

describe('file() validators given in headers', () => {
  it('checks If-None-Match, If-Match and If-Range against the ETag it sends', async () => {
    const fresh = await server.send('GET', '/tagged', { headers: { 'if-none-match': '"v1"' } })
    expect(fresh.status).toBe(304)
    expect(fresh.headers.etag).toBe('"v1"')
    expect(fresh.text).toBe('')
    const matched = await server.send('GET', '/tagged', { headers: { 'if-match': '"v1"' } })
    expect(matched.status).toBe(200)
    expect(matched.text).toBe(BODY)
    const ranged = await server.send('GET', '/tagged', {
      headers: { range: 'bytes=0-3', 'if-range': '"v1"' },
    })
    expect([ranged.status, ranged.text]).toEqual([206, '0123'])
    const computed = (await server.send('GET', '/file')).headers.etag as string
    const other = await server.send('GET', '/tagged', { headers: { 'if-none-match': computed } })
    expect(other.status).toBe(200)
  })

  it('checks If-Modified-Since against the Last-Modified it sends', async () => {
    const reply = await server.send('GET', '/tagged', {
      headers: { 'if-modified-since': 'Mon, 01 Jan 2024 00:00:00 GMT' },
    })
    expect(reply.status).toBe(304)
    expect(reply.headers['last-modified']).toBe('Mon, 01 Jan 2024 00:00:00 GMT')
  })
})

describe('file() conditional dates', () => {
  it('ignores an If-Unmodified-Since, If-Modified-Since or If-Range that is no HTTP-date', async () => {
    const conditions: Record<string, string>[] = [
      { 'if-unmodified-since': '1' },
      { 'if-unmodified-since': '2023' },
      { 'if-modified-since': '2100' },
      { 'if-range': '2100', range: 'bytes=0-3' },
    ]
    for (const headers of conditions) {
      const reply = await server.send('GET', '/file', { headers })
      expect(reply.status, JSON.stringify(headers)).toBe(200)
      expect(reply.text, JSON.stringify(headers)).toBe(BODY)
    }
  })

  it('still reads the HTTP-dates of RFC 9110 §5.6.7', async () => {
    const before = 'Mon, 01 Jan 2024 00:00:00 GMT'
    const conditions: [Record<string, string>, number][] = [
      [{ 'if-modified-since': LAST_MODIFIED }, 304],
      [{ 'if-modified-since': 'Wednesday, 03-Jan-24 00:00:00 GMT' }, 304],
      [{ 'if-unmodified-since': before }, 412],
      [{ 'if-range': LAST_MODIFIED, range: 'bytes=0-3' }, 206],
    ]
    for (const [headers, status] of conditions) {
      const reply = await server.send('GET', '/file', { headers })
      expect(reply.status, JSON.stringify(headers)).toBe(status)
    }
  })
})

describe('file() downloads', () => {
  it.each([
    ['../../etc/passwd', 'attachment; filename=passwd'],
    ['..\\..\\boot.ini', 'attachment; filename=boot.ini'],
    ['report.pdf', 'attachment; filename=report.pdf'],
    ['', undefined],
  ])(
    'suggest %j as %s (a name, never a path; an empty one is no attachment)',
    async (as, header) => {
      const reply = await server.send('GET', `/download?as=${encodeURIComponent(as)}`)
      expect(reply.status).toBe(200)
      expect(reply.headers['content-disposition']).toBe(header)
    },
  )
})

describe('views', () => {
  it('escapes every HTML-special character in text and in quoted attributes, once', async () => {
    const value = `&<>"' {{ v }} {{{ v }}} $&`
    const reply = await server.send('GET', `/page?v=${encodeURIComponent(value)}`)
    const escaped = '&amp;&lt;&gt;&quot;&#39; {{ v }} {{{ v }}} $&amp;'
    expect(reply.status).toBe(200)
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(reply.text).toBe(`<p title="${escaped}" data-v='${escaped}'>${escaped}</p>0`)
  })

  // Regressions: a function rendered its source code; an object without a prototype failed the page.
  it('renders nothing for a function or a value that has no text, and the page still renders', async () => {
    const reply = await server.send('GET', '/odd')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('[][][][fine]')
  })
})
