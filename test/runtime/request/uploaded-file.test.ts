/** UploadedFile (rule 6): metadata, stream, moveTo and its refusals. */
import { existsSync, statSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import {
  UPLOAD_ERR_OK,
  UPLOAD_ERR_PARTIAL,
  UploadedFile,
} from '../../../src/runtime/request/uploaded-file.js'
import { uploadDir } from './helpers.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()))
})

async function tempFile(content = 'content'): Promise<{ dir: string; file: UploadedFile }> {
  const { dir, remove } = await uploadDir()
  cleanups.push(remove)
  const path = join(dir, 'upload')
  await writeFile(path, content)
  const file = new UploadedFile({
    path,
    size: Buffer.byteLength(content),
    clientFilename: 'photo.png',
    clientMediaType: 'image/png',
  })
  return { dir, file }
}

describe('UploadedFile', () => {
  it('reports client name, media type, size and UPLOAD_ERR_OK', async () => {
    const { file } = await tempFile('12345')
    expect(UPLOAD_ERR_OK).toBe(0)
    expect([
      file.getClientFilename(),
      file.getClientMediaType(),
      file.getSize(),
      file.getError(),
    ]).toEqual(['photo.png', 'image/png', 5, UPLOAD_ERR_OK])
  })

  it('streams its content', async () => {
    const { file } = await tempFile('streamed')
    const chunks = await Readable.from(file.getStream()).toArray()
    expect(Buffer.concat(chunks).toString()).toBe('streamed')
  })

  it('moves once; a second move and later reads throw', async () => {
    const { dir, file } = await tempFile('moved')
    const target = join(dir, 'final.png')
    await file.moveTo(target)
    expect(await readFile(target, 'utf8')).toBe('moved')
    expect(existsSync(join(dir, 'upload'))).toBe(false)
    expect(file.isMoved()).toBe(true)
    await expect(file.moveTo(join(dir, 'again.png'))).rejects.toThrow(/already moved/)
    expect(() => file.getStream()).toThrow(/already moved/)
  })

  it('refuses a concurrent second move', async () => {
    const { dir, file } = await tempFile()
    const first = file.moveTo(join(dir, 'a'))
    await expect(file.moveTo(join(dir, 'b'))).rejects.toThrow(/already moving/)
    await first
    expect(existsSync(join(dir, 'a'))).toBe(true)
  })

  it('refuses a target that is a directory, and stays movable', async () => {
    const { dir, file } = await tempFile()
    await expect(file.moveTo(dir)).rejects.toThrow(/is a directory/)
    await file.moveTo(join(dir, 'ok'))
    expect(file.isMoved()).toBe(true)
  })

  it('moves across file systems by copy and unlink', async () => {
    // /dev/shm is tmpfs on Linux, usually another device than the temp dir; elsewhere the
    // same-device rename path runs and the outcome is the same.
    const base = existsSync('/dev/shm') ? '/dev/shm' : undefined
    const other = base ? await mkdtemp(join(base, 'fw-move-')) : (await uploadDir()).dir
    cleanups.push(() => rm(other, { recursive: true, force: true }))
    const { dir, file } = await tempFile('across')
    const target = join(other, 'x.bin')
    await file.moveTo(target)
    expect(await readFile(target, 'utf8')).toBe('across')
    expect(existsSync(join(dir, 'upload'))).toBe(false)
    expect(statSync(target).size).toBe(6)
  })

  it('refuses to move or read a failed upload', () => {
    const file = new UploadedFile({ path: null, size: 0, error: UPLOAD_ERR_PARTIAL })
    expect(file.getError()).toBe(UPLOAD_ERR_PARTIAL)
    expect(() => file.getStream()).toThrow(/failed/)
  })

  it('discard() removes the temp file unless it was moved', async () => {
    const { dir, file } = await tempFile()
    await file.discard()
    expect(existsSync(join(dir, 'upload'))).toBe(false)
    const moved = await tempFile()
    await moved.file.moveTo(join(moved.dir, 'kept'))
    await moved.file.discard()
    expect(existsSync(join(moved.dir, 'kept'))).toBe(true)
  })
})
