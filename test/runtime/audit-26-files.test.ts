/**
 * Audit of file() and safePath() over real HTTP. Regressions: an If-Range date later than the
 * file's Last-Modified was a 206, so a file replaced by an older version (`cp -p`) had its bytes
 * spliced onto the client's part of the other one; a Unix socket in the folder was a 500 with a
 * logged stack per request; a download name holding a lone surrogate was a 500; `safePath` let
 * the static-folder pattern serve `.env` and `.git/config`.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../src/runtime/file.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { safePath } from '../../src/runtime/safe-path.js'
import { tempDir } from '../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'

let server: Served
let socketServer: Server
let publicDir: string

beforeAll(async () => {
  publicDir = join(tempDir('fw-audit-26-'), 'public')
  mkdirSync(join(publicDir, '.git'), { recursive: true })
  writeFileSync(join(publicDir, 'v.txt'), 'VERSION-ONE-abcdefghij')
  writeFileSync(join(publicDir, '.env'), 'SECRET=1')
  writeFileSync(join(publicDir, '.git', 'config'), '[core]')
  mkdirSync(join(publicDir, '.well-known'))
  writeFileSync(join(publicDir, '.well-known', 'security.txt'), 'Contact: x')
  socketServer = createServer()
  await new Promise<void>((resolve) => socketServer.listen(join(publicDir, 'sock'), resolve))
  server = await serve(
    await bootKernel((r) => {
      r.get('/f/{path:.*}', (req: FwRequest, path: string) =>
        file(safePath(publicDir, path), { request: req }),
      )
      r.get('/dot/{path:.*}', (req: FwRequest, path: string) =>
        file(safePath(publicDir, path, { dotfiles: true })),
      )
      r.get('/dl', () => file(join(publicDir, 'v.txt'), { download: 'half \ud83d.txt' }))
    }),
  )
})

afterAll(async () => {
  await server.close()
  await new Promise((resolve) => socketServer.close(resolve))
  cleanupTempDirs()
})

describe('file() If-Range with a date', () => {
  it('sends the whole file when the date is not the Last-Modified exactly', async () => {
    const path = join(publicDir, 'v.txt')
    const newer = new Date('2026-01-02T00:00:00Z')
    utimesSync(path, newer, newer)
    const part = await server.send('GET', '/f/v.txt', { headers: { range: 'bytes=0-9' } })
    expect(part.status).toBe(206)
    const lastModified = part.headers['last-modified'] as string
    // The file is replaced by another version, dated a day earlier (`cp -p`, `rsync -t`).
    writeFileSync(path, 'version-two-ABCDEFGHIJ')
    const older = new Date('2026-01-01T00:00:00Z')
    utimesSync(path, older, older)
    const rest = await server.send('GET', '/f/v.txt', {
      headers: { range: 'bytes=10-', 'if-range': lastModified },
    })
    expect(rest.status).toBe(200)
    expect(rest.text).toBe('version-two-ABCDEFGHIJ')
    const same = await server.send('GET', '/f/v.txt', {
      headers: { range: 'bytes=10-', 'if-range': older.toUTCString() },
    })
    expect([same.status, same.text]).toEqual([206, 'o-ABCDEFGHIJ'])
  })
})

describe('file() odd files and names', () => {
  it('answers 404 for a Unix socket, as for any path that is no regular file', async () => {
    const reply = await server.send('GET', '/f/sock')
    expect(reply.status).toBe(404)
  })

  it('sends a download name holding a lone surrogate, the surrogate replaced', async () => {
    const reply = await server.send('GET', '/dl')
    expect(reply.status).toBe(200)
    expect(reply.headers['content-disposition']).toBe(
      `attachment; filename="half ?.txt"; filename*=UTF-8''half%20%EF%BF%BD.txt`,
    )
  })
})

describe('safePath() and dotfiles', () => {
  it('refuses a dotfile or a file in a dot folder with a 404', async () => {
    for (const path of ['/f/.env', '/f/.git/config', '/f/.well-known/security.txt']) {
      const reply = await server.send('GET', path)
      expect(reply.status, path).toBe(404)
    }
    expect(() => safePath(publicDir, 'x/../.env')).toThrow()
    expect(safePath(publicDir, '.git/../v.txt')).toBe(join(publicDir, 'v.txt'))
  })

  it('serves them with dotfiles: true', async () => {
    const reply = await server.send('GET', '/dot/.well-known/security.txt')
    expect([reply.status, reply.text]).toEqual([200, 'Contact: x'])
  })
})
