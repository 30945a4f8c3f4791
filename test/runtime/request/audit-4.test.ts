/**
 * Regressions found by the fourth audit of the request side: a browser form with many optional
 * file inputs, and an upload moved without `await`.
 */
import { existsSync, statSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'
import {
  eventually,
  listDir,
  MULTIPART_TYPE,
  multipart,
  send,
  useServers,
  type Part,
} from './helpers.js'

const { serve, freshDir } = useServers()

const emptyInputs = (count: number): Part[] =>
  Array.from({ length: count }, (_, i) => ({ name: `photo${i}`, filename: '', content: '' }))

describe('empty file inputs of a browser form (filename="", no content)', () => {
  it('count against no file limit: 30 untouched inputs and one file pass a limit of 20', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([
      ...emptyInputs(30),
      { name: 'cv', filename: 'cv.txt', content: 'hello' },
      { name: 'title', value: 'Job' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body.files)).toEqual(['cv'])
    expect(res.body.input).toEqual({ title: 'Job' })
    expect(await eventually(async () => (await listDir(dir)).length === 0)).toBe(true)
  })

  it('still leave real files limited: a filename or content makes a part a file', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir, limits: { files: 2 } })
    const files: Part[] = [
      { name: 'a', filename: 'a.txt', content: '' }, // a named empty file is a file
      { name: 'b', filename: '', content: 'data' }, // content without a filename too
      { name: 'c', filename: 'c.txt', content: 'c' },
    ]
    const over = multipart([...emptyInputs(5), ...files])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body: over })
    expect(res.status).toBe(413)
    expect(res.body.error).toMatch(/Too many files/)
    const atLimit = multipart([...emptyInputs(5), ...files.slice(0, 2)])
    const ok = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body: atLimit })
    expect(ok.status).toBe(200)
    expect(Object.keys(ok.body.files)).toEqual(['a', 'b'])
    expect(await eventually(async () => (await listDir(dir)).length === 0)).toBe(true)
  })
})

describe('files of one field', () => {
  it('are listed in the order sent, a part without a filename among them', async () => {
    const { port } = await serve({ uploadDir: await freshDir() })
    const body = multipart([
      { name: 'docs[]', filename: '', content: 'first' }, // no filename, content: a file
      { name: 'docs[]', filename: 'second.txt', content: 'second' },
    ])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.body.files.docs.map((file: { content: string }) => file.content)).toEqual([
      'first',
      'second',
    ])
  })
})

describe('moveTo() without await', () => {
  const raw = multipart([{ name: 'doc', filename: 'doc.txt', content: 'moved content' }])

  async function uploaded(dir: string): Promise<{ request: FwRequest; file: UploadedFile }> {
    const request = FwRequest.create(
      { method: 'POST', headers: { 'content-type': MULTIPART_TYPE }, body: raw },
      { uploadDir: dir },
    )
    await request.loadBody()
    return { request, file: request.file('doc') as UploadedFile }
  }

  it('completes before cleanup() resolves: the target is there, the temp file gone', async () => {
    const dir = await freshDir()
    const { request, file } = await uploaded(dir)
    const target = join(await freshDir(), 'kept.txt')
    void file.moveTo(target) // the handler returns before the move finishes
    await request.cleanup()
    expect(await readFile(target, 'utf8')).toBe('moved content')
    expect(await listDir(dir)).toEqual([])
  })

  it('leaves no temp file behind when the move fails after the response', async () => {
    const dir = await freshDir()
    const { request, file } = await uploaded(dir)
    const failed = file.moveTo(join(dir, 'missing-folder', 'x.txt'))
    failed.catch(() => {})
    await request.cleanup()
    await expect(failed).rejects.toThrow(/ENOENT/)
    expect(await listDir(dir)).toEqual([])
  })

  it('over HTTP: an unawaited move into a missing folder leaves the upload dir empty', async () => {
    const dir = await freshDir()
    const { port } = await serve({ uploadDir: dir }, (request) => {
      const file = request.file('doc') as UploadedFile
      file.moveTo(join(dir, 'no-such-folder', 'doc.txt')).catch(() => {})
      return { ok: true }
    })
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body: raw })
    expect(res.status).toBe(200)
    expect(await eventually(async () => (await listDir(dir)).length === 0)).toBe(true)
    expect(existsSync(join(dir, 'no-such-folder'))).toBe(false)
  })
})

// A second file system (tmpfs) beside the temp dir's: rename() cannot cross to it (EXDEV).
const OTHER_DEVICE = '/dev/shm'
const crossDevice =
  existsSync(OTHER_DEVICE) && statSync(OTHER_DEVICE).dev !== statSync(tmpdir()).dev

describe('moveTo() to another file system', () => {
  it.skipIf(!crossDevice)(
    'works across file systems (rename gives EXDEV): the target complete, nothing else left in either folder',
    async () => {
      const dir = await freshDir()
      const request = FwRequest.create(
        {
          method: 'POST',
          headers: { 'content-type': MULTIPART_TYPE },
          body: multipart([{ name: 'doc', filename: 'doc.txt', content: 'across devices' }]),
        },
        { uploadDir: dir },
      )
      await request.loadBody()
      const folder = await mkdtemp(join(OTHER_DEVICE, 'fw-move-'))
      try {
        await (request.file('doc') as UploadedFile).moveTo(join(folder, 'doc.txt'))
        expect(await readFile(join(folder, 'doc.txt'), 'utf8')).toBe('across devices')
        expect(await listDir(folder)).toEqual(['doc.txt'])
        expect(await listDir(dir)).toEqual([])
      } finally {
        await rm(folder, { recursive: true, force: true })
      }
    },
  )
})

describe('except() with several indexes of one list', () => {
  it('removes the items the indexes name in the input, whatever their order', async () => {
    const { port } = await serve({}, (request) => ({
      ascending: request.except('items.0', 'items.1'),
      descending: request.except('items.2', 'items.0'),
      nested: request.except('items.1', 'items.1.name'),
    }))
    const body = JSON.stringify({ items: ['a', { name: 'b' }, 'c'] })
    const res = await send(port, { headers: { 'content-type': 'application/json' }, body })
    expect(res.body).toEqual({
      ascending: { items: ['c'] },
      descending: { items: [{ name: 'b' }] },
      nested: { items: ['a', 'c'] },
    })
  })
})
