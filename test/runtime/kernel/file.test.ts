/**
 * file(): a file as the response over real HTTP. Checked before anything is sent (404 for a
 * missing file or a folder), typed by extension, sized, dated, optionally an attachment; HEAD
 * reads nothing; no file descriptor is left open.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { safePath } from '../../../src/runtime/safe-path.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

let dir: string
let server: Served

beforeAll(async () => {
  dir = tempDir('fw-file-')
  mkdirSync(join(dir, 'public', 'css'), { recursive: true })
  writeFileSync(join(dir, 'public', 'css', 'site.css'), 'body { color: red }\n')
  writeFileSync(join(dir, 'public', 'data.json'), '{"ok":true}')
  writeFileSync(join(dir, 'public', 'blob.weird-extension'), Buffer.from([0, 1, 2, 3, 254, 255]))
  writeFileSync(join(dir, 'public', 'empty.txt'), '')
  writeFileSync(join(dir, 'report.pdf'), '%PDF-1.4 not really')
  const publicDir = join(dir, 'public')
  server = await serve(
    await bootKernel((r) => {
      r.get('/files/{path:.*}', (req: unknown, path: string) => file(safePath(publicDir, path)))
      r.get('/ranged/{path:.*}', (req: FwRequest, path: string) =>
        file(safePath(publicDir, path), {
          request: req,
          headers: { 'cache-control': 'max-age=60' },
        }),
      )
      r.get('/report', () => file(join(dir, 'report.pdf'), { download: true }))
      r.get('/report-named', () => file(join(dir, 'report.pdf'), { download: 'Résumé 2026.pdf' }))
      r.get('/typed', () =>
        file(join(dir, 'report.pdf'), {
          contentType: 'text/plain',
          headers: { 'Cache-Control': 'max-age=60' },
        }),
      )
    }),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('file()', () => {
  it('sends the file with its type from the extension, its length and its date', async () => {
    const reply = await server.send('GET', '/files/css/site.css')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('body { color: red }\n')
    expect(reply.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(reply.headers['content-length']).toBe('20')
    expect(reply.headers['transfer-encoding']).toBeUndefined()
    expect(Date.parse(reply.headers['last-modified'] as string)).toBeGreaterThan(
      Date.now() - 60_000,
    )
    expect(reply.headers['x-content-type-options']).toBe('nosniff')
    expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect((await server.send('GET', '/files/data.json')).headers['content-type']).toBe(
      'application/json; charset=utf-8',
    )
  })

  it('sends bytes as they are, as application/octet-stream when the extension is unknown', async () => {
    const reply = await new Promise<{ type: string | undefined; bytes: number[] }>(
      (resolve, reject) => {
        fetch(`http://127.0.0.1:${server.port}/files/blob.weird-extension`)
          .then(async (res) =>
            resolve({
              type: res.headers.get('content-type') ?? undefined,
              bytes: [...new Uint8Array(await res.arrayBuffer())],
            }),
          )
          .catch(reject)
      },
    )
    expect(reply.type).toBe('application/octet-stream')
    expect(reply.bytes).toEqual([0, 1, 2, 3, 254, 255])
  })

  it('sends an empty file as 200 with Content-Length 0', async () => {
    const reply = await server.send('GET', '/files/empty.txt')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('')
    expect(reply.headers['content-length']).toBe('0')
  })

  it('answers 404 JSON for a missing file, a folder, a path through a file and an escape', async () => {
    for (const path of [
      '/files/nope.txt',
      '/files/css',
      '/files/data.json/x',
      '/files/..%2Freport.pdf',
      '/files/%2e%2e/report.pdf',
    ]) {
      const reply = await server.send('GET', path)
      expect(reply.status, path).toBe(404)
      expect(reply.headers['content-type'], path).toBe('application/json; charset=utf-8')
      expect(JSON.parse(reply.text), path).toMatchObject({ error: 'Not Found' })
    }
  })

  it('answers 404 at once for a named pipe (opening one for reading would wait for a writer)', async () => {
    execFileSync('mkfifo', [join(dir, 'public', 'pipe')])
    const reply = await server.send('GET', '/files/pipe')
    expect(reply.status).toBe(404)
  })

  it('sends an attachment under the file name or a given one (RFC 6266, non-ASCII as filename*)', async () => {
    const plain = await server.send('GET', '/report')
    expect(plain.headers['content-disposition']).toBe('attachment; filename=report.pdf')
    expect(plain.headers['content-type']).toBe('application/pdf')
    const named = await server.send('GET', '/report-named')
    expect(named.headers['content-disposition']).toBe(
      `attachment; filename="R?sum? 2026.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026.pdf`,
    )
  })

  it('takes a content type and headers that win over the computed ones', async () => {
    const reply = await server.send('GET', '/typed')
    expect(reply.headers['content-type']).toBe('text/plain')
    expect(reply.headers['cache-control']).toBe('max-age=60')
  })

  it('answers HEAD with the headers (Content-Length included) and no body', async () => {
    const reply = await server.send('HEAD', '/files/css/site.css')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('')
    expect(reply.headers['content-length']).toBe('20')
    expect(reply.headers['content-type']).toBe('text/css; charset=utf-8')
  })

  it('leaves no file descriptor open after hits, misses, folders and HEAD requests', async () => {
    const open = (): number => readdirSync('/proc/self/fd').length
    await server.send('GET', '/files/css/site.css') // warm: the first response loads mime-types
    const before = open()
    for (let i = 0; i < 40; i++) {
      await server.send('GET', '/files/css/site.css')
      await server.send('HEAD', '/files/data.json')
      await server.send('GET', '/files/css')
      await server.send('GET', '/files/empty.txt')
    }
    await vi.waitFor(() => expect(open()).toBeLessThanOrEqual(before + 2))
  })
})

// file(path, { request }): what caches and download managers expect (RFC 9110 §13-14), as
// Express's sendFile answers them. The file is 'body { color: red }\n', 20 bytes.
describe('file() with the request: conditional requests and byte ranges', () => {
  const CSS = '/ranged/css/site.css'
  const validators = async (): Promise<{ etag: string; lastModified: string }> => {
    const reply = await server.send('GET', CSS)
    return {
      etag: reply.headers.etag as string,
      lastModified: reply.headers['last-modified'] as string,
    }
  }

  it('sends a weak ETag and Accept-Ranges, and without the request no Accept-Ranges', async () => {
    const reply = await server.send('GET', CSS)
    expect(reply.status).toBe(200)
    expect(reply.headers.etag).toMatch(/^W\/"14-[0-9a-f]+"$/)
    expect(reply.headers['accept-ranges']).toBe('bytes')
    const plain = await server.send('GET', '/files/css/site.css', {
      headers: { range: 'bytes=0-3' },
    })
    expect(plain.status).toBe(200)
    expect(plain.headers['accept-ranges']).toBeUndefined()
    expect(plain.text).toBe('body { color: red }\n')
  })

  it('answers 304 with the validators and no body for a matching If-None-Match or If-Modified-Since', async () => {
    const { etag, lastModified } = await validators()
    const conditions: Record<string, string>[] = [
      { 'if-none-match': etag },
      { 'if-modified-since': lastModified },
    ]
    for (const headers of conditions) {
      const reply = await server.send('GET', CSS, { headers })
      expect(reply.status).toBe(304)
      expect(reply.text).toBe('')
      expect(reply.headers.etag).toBe(etag)
      expect(reply.headers['cache-control']).toBe('max-age=60')
      expect(reply.headers['content-type']).toBeUndefined()
    }
    const changed = await server.send('GET', CSS, { headers: { 'if-none-match': 'W/"other"' } })
    expect(changed.status).toBe(200)
    expect(changed.text).toBe('body { color: red }\n')
  })

  it('reads an If-Modified-Since as GMT whatever the server time zone, and ignores one without a zone', async () => {
    const { lastModified } = await validators()
    // asctime form (`Sun Nov  6 08:49:37 1994`): GMT by definition, written without a zone.
    const asctime = (ms: number): string => {
      const [day, date, month, year, time] = new Date(ms).toUTCString().split(' ')
      return `${day!.slice(0, 3)} ${month} ${date!.replace(/^0/, ' ')} ${time} ${year}`
    }
    const at = Date.parse(lastModified)
    const before = process.env.TZ
    process.env.TZ = 'America/New_York'
    try {
      const modifiedSince = async (value: string) =>
        (await server.send('GET', CSS, { headers: { 'if-modified-since': value } })).status
      expect(await modifiedSince(asctime(at))).toBe(304)
      // An hour before the file's date: modified since. Read in New York time, it was 4 hours after.
      expect(await modifiedSince(asctime(at - 3_600_000))).toBe(200)
      // No HTTP-date (no zone): ignored.
      expect(await modifiedSince(lastModified.replace(/ GMT$/, ''))).toBe(200)
    } finally {
      if (before === undefined) delete process.env.TZ
      else process.env.TZ = before
    }
  })

  it('never dates a file after the response, and takes no If-Modified-Since from the future', async () => {
    const path = join(dir, 'public', 'future.txt')
    writeFileSync(path, 'from the future')
    const nextYear = new Date(Date.now() + 365 * 24 * 3600 * 1000)
    utimesSync(path, nextYear, nextYear)
    const reply = await server.send('GET', '/ranged/future.txt')
    expect(reply.status).toBe(200)
    const lastModified = Date.parse(reply.headers['last-modified'] as string)
    expect(lastModified).toBeLessThanOrEqual(Date.parse(reply.headers.date as string))
    // A date later than now is invalid (RFC 7232 §3.3): a client holding one gets the file.
    const future = await server.send('GET', '/ranged/future.txt', {
      headers: { 'if-modified-since': nextYear.toUTCString() },
    })
    expect(future.status).toBe(200)
  })

  it('answers 206 with Content-Range for one range, a suffix and an open end', async () => {
    const cases: [string, string, string][] = [
      ['bytes=0-3', 'body', 'bytes 0-3/20'],
      ['bytes=-4', 'd }\n', 'bytes 16-19/20'],
      ['bytes=15-', 'ed }\n', 'bytes 15-19/20'],
      ['bytes=18-100', '}\n', 'bytes 18-19/20'],
    ]
    for (const [range, body, contentRange] of cases) {
      const reply = await server.send('GET', CSS, { headers: { range } })
      expect(reply.status, range).toBe(206)
      expect(reply.text, range).toBe(body)
      expect(reply.headers['content-range'], range).toBe(contentRange)
      expect(reply.headers['content-length'], range).toBe(String(body.length))
    }
    const head = await server.send('HEAD', CSS, { headers: { range: 'bytes=0-3' } })
    expect(head.status).toBe(206)
    expect(head.headers['content-length']).toBe('4')
    expect(head.text).toBe('')
  })

  it('answers 416 JSON with Content-Range for a range past the end', async () => {
    const reply = await server.send('GET', CSS, { headers: { range: 'bytes=20-' } })
    expect(reply.status).toBe(416)
    expect(reply.headers['content-range']).toBe('bytes */20')
    expect(JSON.parse(reply.text)).toMatchObject({ code: 416 })
  })

  it('sends the whole file for a malformed range, another unit or several ranges', async () => {
    for (const range of ['bytes=x-y', 'items=0-3', 'bytes=0-1,5-6']) {
      const reply = await server.send('GET', CSS, { headers: { range } })
      expect(reply.status, range).toBe(200)
      expect(reply.text, range).toBe('body { color: red }\n')
    }
  })

  it('honours If-Range: a range while the file is unchanged, the whole file once it changed', async () => {
    const { etag, lastModified } = await validators()
    const same = await server.send('GET', CSS, {
      headers: { range: 'bytes=0-3', 'if-range': etag },
    })
    expect(same.status).toBe(206)
    const byDate = await server.send('GET', CSS, {
      headers: { range: 'bytes=0-3', 'if-range': lastModified },
    })
    expect(byDate.status).toBe(206)
    const stale = await server.send('GET', CSS, {
      headers: { range: 'bytes=0-3', 'if-range': 'W/"0-0"' },
    })
    expect(stale.status).toBe(200)
    expect(stale.text).toBe('body { color: red }\n')
  })

  it('answers 412 for a failed If-Match or If-Unmodified-Since, and serves If-Match: *', async () => {
    expect((await server.send('GET', CSS, { headers: { 'if-match': '"nope"' } })).status).toBe(412)
    const past = new Date(Date.now() - 86_400_000).toUTCString()
    const unmodified = await server.send('GET', CSS, { headers: { 'if-unmodified-since': past } })
    expect(unmodified.status).toBe(412)
    expect((await server.send('GET', CSS, { headers: { 'if-match': '*' } })).status).toBe(200)
    const { etag } = await validators()
    expect((await server.send('GET', CSS, { headers: { 'if-match': etag } })).status).toBe(200)
  })
})
