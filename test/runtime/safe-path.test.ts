/**
 * safePath(): a catch-all's decoded value used as a file path never leaves its base folder, over
 * real HTTP too (`%2e%2e` and `%2F` arrive decoded in a catch-all).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../src/runtime/http-error.js'
import { create } from '../../src/runtime/response.js'
import { safePath } from '../../src/runtime/safe-path.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'

const base = mkdtempSync(join(tmpdir(), 'fw-safe-path-'))
mkdirSync(join(base, 'public', 'docs'), { recursive: true })
writeFileSync(join(base, 'public', 'docs', 'a.txt'), 'public a')
writeFileSync(join(base, 'secret.txt'), 'secret')
const root = join(base, 'public')

afterAll(() => {
  rmSync(base, { recursive: true, force: true })
  cleanupTempDirs()
})

describe('safePath', () => {
  it.each([
    ['docs/a.txt', join(root, 'docs', 'a.txt')],
    ['docs/../docs/a.txt', join(root, 'docs', 'a.txt')],
    ['./docs//a.txt', join(root, 'docs', 'a.txt')],
    ['', root],
  ])('keeps %j inside the base: %s', (value, expected) => {
    expect(safePath(root, value)).toBe(expected)
  })

  it.each([
    '../secret.txt',
    'docs/../../secret.txt',
    '/etc/passwd',
    '..',
    'docs/a.txt\0.png',
    '../public-other/x',
  ])('refuses %j with a 404', (value) => {
    let thrown: unknown
    try {
      safePath(root, value)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(HttpError)
    expect((thrown as HttpError).status).toBe(404)
  })

  it('resolves a relative base against the working directory', () => {
    expect(safePath('public', 'a.txt')).toBe(resolve('public', 'a.txt'))
  })
})

describe('safePath in a catch-all route, over HTTP', () => {
  let served: Served

  beforeAll(async () => {
    const kernel = await bootKernel((r) => {
      r.get('/files/{path:.*}', (_req: FwRequest, path: string) =>
        create(readFileSync(safePath(root, path), 'utf8')),
      )
    })
    served = await serve(kernel)
  })
  afterAll(() => served.close())

  it('serves a file inside the base', async () => {
    const reply = await served.send('GET', '/files/docs/a.txt')
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('public a')
  })

  it.each([
    '/files/%2e%2e/secret.txt',
    '/files/docs%2F..%2F..%2Fsecret.txt',
    '/files/%2Fetc%2Fpasswd',
  ])('answers %s with a 404, not the file', async (path) => {
    const reply = await served.send('GET', path)
    expect(reply.status).toBe(404)
    expect(reply.text).not.toContain('secret')
  })
})
