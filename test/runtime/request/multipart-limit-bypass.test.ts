/**
 * Regression: multipart bytes that no limit counted. Parts busboy skips (no Content-Disposition),
 * parts we drop (no name, `__proto__`) and a preamble were read to the end and answered 200; a
 * declared Content-Length was not checked for multipart. Every byte now counts, over real HTTP.
 */
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { BOUNDARY, MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()
const headers = { 'content-type': MULTIPART_TYPE }

// Small limits: the overhead allowance is 1 MiB + 1 KiB a part.
const limits = { body: 1024, fileSize: 1024, totalFileSize: 2048, parts: 8 }
const OVERHEAD = 1024 * 1024 + 8 * 1024
const BESIDES_FILES = limits.body + OVERHEAD
const TOTAL = limits.totalFileSize + limits.body + OVERHEAD

/** One part with the given head lines, as sent. */
function part(head: string, content: string | Buffer): Buffer {
  const start = head === '' ? `--${BOUNDARY}\r\n\r\n` : `--${BOUNDARY}\r\n${head}\r\n\r\n`
  return Buffer.concat([Buffer.from(start), Buffer.from(content), Buffer.from('\r\n')])
}

/** A whole body: an optional preamble, the parts, a field `a=1` and the close delimiter. */
function form(parts: Buffer[], preamble = ''): Buffer {
  const rest = multipart([{ name: 'a', value: '1' }])
  const lead = preamble === '' ? '' : `${preamble}\r\n`
  return Buffer.concat([Buffer.from(lead), ...parts, rest])
}

const file = (name: string, size: number) =>
  part(
    `Content-Disposition: form-data; name="${name}"; filename="f.bin"\r\nContent-Type: application/octet-stream`,
    Buffer.alloc(size, 1),
  )
const field = (disposition: string, size: number) =>
  part(`Content-Disposition: ${disposition}`, 'x'.repeat(size))

/** Status and error for `body`, sent chunked: counted as it streams, no length declared. */
async function statusOf(port: number, body: Buffer): Promise<{ status: number; error?: string }> {
  const res = await send(port, { headers: { ...headers, 'transfer-encoding': 'chunked' }, body })
  return { status: res.status, error: res.body.error }
}

describe('multipart bytes that no limit counted', () => {
  it('counts a part without Content-Disposition against the bytes besides files', async () => {
    const { port } = await serve({ limits, uploadDir: await freshDir() })
    const small = await send(port, {
      headers,
      body: form([part('X-Note: skipped', 'x'.repeat(100))]),
    })
    expect([small.status, small.body.input]).toEqual([200, { a: '1' }])
    const big = await statusOf(port, form([part('X-Note: skipped', 'x'.repeat(2 * 1024 * 1024))]))
    expect(big).toEqual({
      status: 413,
      error: `Multipart body exceeds the limit of ${BESIDES_FILES} bytes besides files`,
    })
    expect((await send(port, { method: 'GET', path: '/?ok=1' })).body.query).toEqual({ ok: '1' })
  })

  it('counts a file under a dropped name (__proto__, none) against the file limits', async () => {
    const dir = await freshDir()
    const { port } = await serve({ limits, uploadDir: dir })
    const kept = await send(port, { headers, body: form([file('__proto__', 1024)]) })
    expect([kept.status, kept.body.files]).toEqual([200, {}])
    expect(await statusOf(port, form([file('__proto__', 1025)]))).toEqual({
      status: 413,
      error: 'Uploaded file exceeds the limit of 1024 bytes',
    })
    const nameless = part('Content-Disposition: form-data; filename="f.bin"', Buffer.alloc(1025))
    expect((await statusOf(port, form([nameless]))).status).toBe(413)
    // Dropped files count towards the total of all files too.
    const three = form([file('a', 1024), file('__proto__', 1024), file('b', 1)])
    expect(await statusOf(port, three)).toEqual({
      status: 413,
      error: 'Uploaded files exceed the total limit of 2048 bytes',
    })
  })

  it('counts a field under a dropped name like any field: `__proto__` or none, as `a`', async () => {
    const { port } = await serve({ limits, uploadDir: await freshDir() })
    const small = await send(port, {
      headers,
      body: form([field('form-data; name="__proto__"', 10)]),
    })
    expect([small.status, small.body.input]).toEqual([200, { a: '1' }])
    const error = 'Form fields exceed the limit of 1024 bytes'
    for (const disposition of ['form-data; name="b"', 'form-data; name="__proto__"', 'form-data']) {
      expect(await statusOf(port, form([field(disposition, 1025)]))).toEqual({ status: 413, error })
    }
  })

  it('counts a preamble: at the limit besides files 200, one byte more 413', async () => {
    const { port } = await serve({ limits, uploadDir: await freshDir() })
    const rest = form([]).length + 2 // the CRLF that ends the preamble
    const exact = await send(port, { headers, body: form([], 'p'.repeat(BESIDES_FILES - rest)) })
    expect([exact.status, exact.body.input]).toEqual([200, { a: '1' }])
    const over = await statusOf(port, form([], 'p'.repeat(BESIDES_FILES - rest + 1)))
    expect(over.status).toBe(413)
  })

  it('refuses a declared Content-Length over the multipart total before the body arrives', async () => {
    const { port } = await serve({ limits, uploadDir: await freshDir() })
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        port,
        host: '127.0.0.1',
        method: 'POST',
        headers: { ...headers, 'content-length': String(TOTAL + 1) },
      })
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0)
        req.destroy()
      })
      req.on('error', reject)
      req.write(form([]).subarray(0, 10))
    })
    expect(status).toBe(413)
  })

  it('with the default limits: a 4 MiB skipped part, preamble, or dropped field is a 413', async () => {
    const { port } = await serve({ uploadDir: await freshDir() })
    const four = 4 * 1024 * 1024
    const bodies = [
      form([part('X-Note: skipped', 'x'.repeat(four))]),
      form([], 'p'.repeat(four)),
      form([field('form-data; name="__proto__"', 3 * 1024 * 1024)]),
      form([field('form-data', 3 * 1024 * 1024)]),
    ]
    for (const body of bodies) expect((await statusOf(port, body)).status).toBe(413)
    const ok = await send(port, { headers, body: form([field('form-data; name="b"', 1000)]) })
    expect(ok.body.input).toEqual({ b: 'x'.repeat(1000), a: '1' })
  })
})
