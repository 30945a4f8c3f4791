/**
 * HTTP-dates whose four-digit year is below 100 (`0094`): Date.UTC reads a year 0 to 99 as
 * 1900 + year, so `Sat, 01 Jan 0094` was taken for 1 January 1994 and a file dated between the
 * two answered 304 to an If-Modified-Since it was modified after.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../src/runtime/file.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { safePath } from '../../src/runtime/safe-path.js'
import { tempDir } from '../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'

let server: Served
/** The file's date: 1 January 1950, before 1994 and after the year 94. */
const MTIME = new Date(Date.UTC(1950, 0, 1))

beforeAll(async () => {
  const dir = tempDir('fw-review-h-')
  mkdirSync(join(dir, 'public'))
  writeFileSync(join(dir, 'public', 'a.txt'), 'old\n')
  utimesSync(join(dir, 'public', 'a.txt'), MTIME, MTIME)
  const publicDir = join(dir, 'public')
  server = await serve(
    await bootKernel((r) => {
      r.get('/files/{path:.*}', (req: FwRequest, path: string) =>
        file(safePath(publicDir, path), { request: req }),
      )
    }),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

const get = async (headers: Record<string, string>) =>
  (await server.send('GET', '/files/a.txt', { headers })).status

describe('an HTTP-date of a year below 100', () => {
  it('is that year, not 1900 + year (IMF-fixdate and asctime)', async () => {
    // The file was modified after the year 94: a 200, not a 304.
    expect(await get({ 'if-modified-since': 'Sat, 01 Jan 0094 00:00:00 GMT' })).toBe(200)
    expect(await get({ 'if-modified-since': 'Sat Jan  1 00:00:00 0094' })).toBe(200)
    // Against a date in 1994 the file is unmodified: the 304 still comes.
    expect(await get({ 'if-modified-since': 'Sat, 01 Jan 1994 00:00:00 GMT' })).toBe(304)
  })

  it('knows the year 0 was a leap year, as 1900 was not', async () => {
    // 29 February 0000 exists (proleptic Gregorian): a date, and the file is newer.
    expect(await get({ 'if-modified-since': 'Tue, 29 Feb 0000 00:00:00 GMT' })).toBe(200)
    expect(await get({ 'if-unmodified-since': 'Tue, 29 Feb 0000 00:00:00 GMT' })).toBe(412)
  })
})
