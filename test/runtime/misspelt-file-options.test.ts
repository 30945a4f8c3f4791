/**
 * file() and safePath() took a misspelt option from plain JavaScript without a word:
 * `file(path, { downlaod: 'invoice.pdf' })` showed the invoice inline, `safePath(base, value,
 * { dotfile: true })` kept `.well-known` a 404. They are called per request, by handlers: the
 * check is a walk over the few keys given (see the measurement in file.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { file, type FileOptions } from '../../src/runtime/file.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { safePath, type SafePathOptions } from '../../src/runtime/safe-path.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'

afterAll(cleanupTempDirs)

const dir = tempDir('fw-misspelt-file-')
mkdirSync(join(dir, '.well-known'))
writeFileSync(join(dir, '.well-known', 'security.txt'), 'Contact: mailto:a@example.com\n')
writeFileSync(join(dir, 'invoice.pdf'), '%PDF-1.4 not really')

// Options as plain JavaScript passes them: no type to catch the typo.
const untyped = <T>(options: Record<string, unknown>): T => options as T

describe('file()', () => {
  it('refuses a misspelt option, naming the one it resembles', async () => {
    await expect(
      file(join(dir, 'invoice.pdf'), untyped<FileOptions>({ downlaod: 'invoice.pdf' })),
    ).rejects.toThrow(new TypeError('file(): unknown option `downlaod` — did you mean `download`?'))
    await expect(
      file(join(dir, 'invoice.pdf'), untyped<FileOptions>({ contenttype: 'text/plain' })),
    ).rejects.toThrow(
      new TypeError('file(): unknown option `contenttype` — did you mean `contentType`?'),
    )
  })

  it('still takes its options', async () => {
    const response = await file(join(dir, 'invoice.pdf'), {
      contentType: 'application/pdf',
      download: 'invoice.pdf',
      headers: { 'cache-control': 'no-store' },
      request: FwRequest.create({ uri: '/invoice', headers: { range: 'bytes=0-3' } }),
    })
    expect(response.status).toBe(206)
    expect(response.header('content-disposition')).toBe('attachment; filename=invoice.pdf')
    expect(response.header('cache-control')).toBe('no-store')
    const body = response.body as NodeJS.ReadableStream
    let text = ''
    for await (const chunk of body) text += String(chunk)
    expect(text).toBe('%PDF')
  })
})

describe('safePath()', () => {
  it('refuses a misspelt option, naming the one it resembles', () => {
    expect(() =>
      safePath(dir, '.well-known/security.txt', untyped<SafePathOptions>({ dotfile: true })),
    ).toThrow(new TypeError('safePath(): unknown option `dotfile` — did you mean `dotfiles`?'))
  })

  it('still takes its option', () => {
    expect(safePath(dir, '.well-known/security.txt', { dotfiles: true })).toBe(
      join(dir, '.well-known', 'security.txt'),
    )
  })
})
