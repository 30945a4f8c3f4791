/**
 * Multipart uploads over real HTTP: files streamed to temp files, every limit, truncated and
 * aborted uploads. Each test counts files in its own upload directory.
 */
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import type { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'
import {
  BOUNDARY,
  eventually,
  listDir,
  MULTIPART_TYPE,
  multipart,
  send,
  useServers,
} from './helpers.js'

const { serve, freshDir } = useServers()
const JSON_TYPE = { 'content-type': 'application/json' }
const isEmpty = (dir: string) => eventually(async () => (await listDir(dir)).length === 0)

describe('multipart over HTTP', () => {
  it('streams two files to temp files that exist during the request and are gone after cleanup', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([
      { name: 'title', value: 'Holiday' },
      { name: 'meta[tag]', value: 'sea' },
      { name: 'photo', filename: '../../etc/passwd', type: 'image/png', content: 'PNGDATA' },
      { name: 'docs[]', filename: 'résumé.txt', type: 'text/plain', content: 'hello world' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(res.body.input).toEqual({ title: 'Holiday', meta: { tag: 'sea' } })
    expect(res.body.post).toEqual({ title: 'Holiday', meta: { tag: 'sea' } })
    expect(res.body.files).toEqual({
      photo: [
        {
          name: 'passwd',
          type: 'image/png',
          size: 7,
          error: 0,
          existsDuringRequest: true,
          content: 'PNGDATA',
        },
      ],
      docs: [
        {
          name: 'résumé.txt',
          type: 'text/plain',
          size: 11,
          error: 0,
          existsDuringRequest: true,
          content: 'hello world',
        },
      ],
    })
    expect(await isEmpty(dir)).toBe(true)
  })

  it('stores uploads under random names, never the client filename', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir }, async (r) => {
      const file = r.file('f')
      return { path: Array.isArray(file) ? null : file?.getPath() }
    })
    const body = multipart([{ name: 'f', filename: 'evil.sh', content: 'x' }])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.body.path).toMatch(new RegExp(`^${dir}/fw-upload-[0-9a-f]{32}$`))
  })

  it('answers 400 for a truncated body, and the server keeps serving (CVE-2025-47944)', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const full = multipart([{ name: 'f', filename: 'a.txt', content: 'x'.repeat(5000) }])
    const truncated = full.subarray(0, full.length - 200)
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body: truncated })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatch(/Malformed multipart body/)
    const next = await send(port, { headers: JSON_TYPE, body: '{"still":"alive"}' })
    expect(next.body.input).toEqual({ still: 'alive' })
    expect(await isEmpty(dir)).toBe(true)
  })

  it('answers 400 for an empty body, which has no closing boundary, and keeps serving', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const truncated = await send(port, {
      headers: { 'content-type': MULTIPART_TYPE },
      body: multipart([{ name: 'a', value: '1' }]).subarray(0, 20),
    })
    const empties: Record<string, string>[] = [
      { 'content-type': MULTIPART_TYPE, 'content-length': '0' },
      { 'content-type': MULTIPART_TYPE, 'transfer-encoding': 'chunked' },
    ]
    for (const headers of empties) {
      const res = await send(port, { headers, body: '' })
      expect(res.status).toBe(400)
      // The same refusal as any other body that ends before its closing boundary.
      expect(res.body.error).toBe(truncated.body.error)
    }
    const noBoundary = await send(port, {
      headers: { 'content-type': 'multipart/form-data', 'content-length': '0' },
      body: '',
    })
    expect(noBoundary.status).toBe(400)
    expect(noBoundary.body.error).toMatch(/missing boundary/)
    const next = await send(port, { headers: JSON_TYPE, body: '{"still":"alive"}' })
    expect(next.body.input).toEqual({ still: 'alive' })
  })

  it('answers 400 without a boundary parameter', async () => {
    const { port } = await serve({ uploadDir: await freshDir() })
    const body = multipart([{ name: 'a', value: '1' }])
    const res = await send(port, { headers: { 'content-type': 'multipart/form-data' }, body })
    expect(res.status).toBe(400)
    expect((await send(port, { method: 'GET' })).status).toBe(200)
  })

  it('accepts a file of exactly the size limit and refuses one byte more, leaving no temp file', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir, limits: { fileSize: 1024 } })
    const headers = { 'content-type': MULTIPART_TYPE }
    const exact = multipart([{ name: 'f', filename: 'a.bin', content: Buffer.alloc(1024, 1) }])
    const ok = await send(port, { headers, body: exact })
    expect(ok.status).toBe(200)
    expect(ok.body.files.f[0].size).toBe(1024)
    const over = multipart([{ name: 'f', filename: 'a.bin', content: Buffer.alloc(1025, 1) }])
    const res = await send(port, { headers, body: over })
    expect(res.status).toBe(413)
    expect(await isEmpty(dir)).toBe(true)
  })

  it('caps all files of one request together: at the total limit 200, one byte over 413', async () => {
    const dir = await freshDir()
    const { port } = await serve({
      uploadDir: dir,
      limits: { fileSize: 1024, totalFileSize: 2048 },
    })
    const headers = { 'content-type': MULTIPART_TYPE }
    const files = (sizes: number[]) =>
      multipart(
        sizes.map((size, i) => ({
          name: 'f[]',
          filename: `${i}.bin`,
          content: Buffer.alloc(size, 1),
        })),
      )
    const ok = await send(port, { headers, body: files([1024, 1024]) })
    expect(ok.status).toBe(200)
    expect(ok.body.files.f.map((f: { size: number }) => f.size)).toEqual([1024, 1024])
    const over = await send(port, { headers, body: files([1024, 1024, 1]) })
    expect(over.status).toBe(413)
    expect(over.body.error).toBe('Uploaded files exceed the total limit of 2048 bytes')
    expect(await isEmpty(dir)).toBe(true)
  })

  it('answers 413 early for a large file over the limit and keeps serving', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir, limits: { fileSize: 1024 } })
    const body = multipart([
      { name: 'f', filename: 'big.bin', content: Buffer.alloc(3 * 1024 * 1024) },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(413)
    expect((await send(port, { method: 'GET', path: '/?ok=1' })).body.query).toEqual({ ok: '1' })
    expect(await isEmpty(dir)).toBe(true)
  })

  it('skips an empty file input (filename="") instead of storing a file', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([
      { name: 'a', value: '1' },
      { name: 'f', filename: '', content: '' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.body).toMatchObject({ input: { a: '1' } })
    // toMatchObject would take any object for `files: {}`: the list must be empty.
    expect((res.body as { files: unknown }).files).toEqual({})
  })

  it('answers 413 for more fields than allowed', async () => {
    const { port } = await serve({ uploadDir: await freshDir(), limits: { fields: 2 } })
    const headers = { 'content-type': MULTIPART_TYPE }
    const fields = (n: number) =>
      multipart(Array.from({ length: n }, (_, i) => ({ name: `f${i}`, value: 'v' })))
    expect((await send(port, { headers, body: fields(2) })).status).toBe(200)
    expect((await send(port, { headers, body: fields(3) })).status).toBe(413)
  })

  it('answers 413 for more files than allowed', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir, limits: { files: 1 } })
    const body = multipart([
      { name: 'a', filename: 'a.txt', content: 'a' },
      { name: 'b', filename: 'b.txt', content: 'b' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(413)
    expect(await isEmpty(dir)).toBe(true)
  })

  it('removes temp files when the client aborts mid-upload', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="big"; filename="big.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    )
    const req = httpRequest({
      port,
      host: '127.0.0.1',
      method: 'POST',
      headers: { 'content-type': MULTIPART_TYPE, 'content-length': String(5 * 1024 * 1024) },
    })
    req.on('error', () => {}) // we destroy it ourselves
    req.write(head)
    req.write(Buffer.alloc(256 * 1024, 7))
    expect(await eventually(async () => (await listDir(dir)).length === 1)).toBe(true)
    req.destroy()
    expect(await isEmpty(dir)).toBe(true)
  })
})

describe('file() of a field named with brackets', () => {
  /** A loaded multipart request of `parts`, and the client file name file(key) finds. */
  async function uploaded(parts: Parameters<typeof multipart>[0]) {
    const request = FwRequest.create(
      { method: 'POST', headers: { 'content-type': MULTIPART_TYPE }, body: multipart(parts) },
      { uploadDir: await freshDir() },
    )
    await request.loadBody()
    const name = (key: string): string | null | undefined =>
      (request.file(key) as UploadedFile | null)?.getClientFilename()
    return { request, name }
  }

  it('finds docs[cv] by its dotted path too, as input() reads nested text fields', async () => {
    const { request, name } = await uploaded([
      { name: 'docs[cv]', filename: 'cv.txt', content: 'cv' },
      { name: 'docs[extra][letter]', filename: 'letter.txt', content: 'letter' },
    ])
    expect(name('docs.cv')).toBe('cv.txt')
    expect(name('docs[cv]')).toBe('cv.txt')
    expect(name('docs.extra.letter')).toBe('letter.txt')
    expect(request.file('docs.missing')).toBeNull()
    expect(request.file('docs..cv')).toBeNull()
    await request.cleanup()
  })

  it('gives an item of a list field by its index: file("docs.1")', async () => {
    const { request, name } = await uploaded([
      { name: 'docs[]', filename: 'a.txt', content: 'a' },
      { name: 'docs[]', filename: 'b.txt', content: 'b' },
      { name: 'photo', filename: 'p.png', content: 'p' },
    ])
    expect(name('docs.0')).toBe('a.txt')
    expect(name('docs.1')).toBe('b.txt')
    expect(request.file('docs.2')).toBeNull()
    expect(request.file('photo.0')).toBeNull() // one file, not a list
    await request.cleanup()
  })
})
