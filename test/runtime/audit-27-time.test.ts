/**
 * Time lens on file serving: conditional requests carry HTTP-dates (RFC 9110 §5.6.7), and one
 * that is not a valid date must be ignored (§13.1.3, §13.1.4). Date.parse rolled impossible
 * dates over (`31 Feb` read as 3 March, `24:00:00` or `:60` into the next minute's start of
 * the same one), so a garbled If-Modified-Since answered a stale 304, and a garbled
 * If-Unmodified-Since a 412.
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
/** The file's date: 1 February 2026, 12:00:00 GMT. */
const MTIME = new Date(Date.UTC(2026, 1, 1, 12, 0, 0))
/** old.txt's: 1 January 1950, before 1994 and after the year 94. */
const OLD_MTIME = new Date(Date.UTC(1950, 0, 1))

beforeAll(async () => {
  const dir = tempDir('fw-audit27-')
  mkdirSync(join(dir, 'public'))
  writeFileSync(join(dir, 'public', 'a.txt'), 'version one\n')
  utimesSync(join(dir, 'public', 'a.txt'), MTIME, MTIME)
  writeFileSync(join(dir, 'public', 'old.txt'), 'old\n')
  utimesSync(join(dir, 'public', 'old.txt'), OLD_MTIME, OLD_MTIME)
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

const get = async (headers: Record<string, string>, file = 'a.txt') =>
  (await server.send('GET', `/files/${file}`, { headers })).status

describe('HTTP-dates of conditional requests', () => {
  it('reads the three HTTP-date forms, valid ones, as GMT', async () => {
    expect(await get({})).toBe(200)
    expect(await get({ 'if-modified-since': 'Sun, 01 Feb 2026 12:00:00 GMT' })).toBe(304)
    expect(await get({ 'if-modified-since': 'Sunday, 01-Feb-26 12:00:00 GMT' })).toBe(304)
    expect(await get({ 'if-modified-since': 'Sun Feb  1 12:00:00 2026' })).toBe(304)
    expect(await get({ 'if-modified-since': 'Sun, 01 Feb 2026 11:59:59 GMT' })).toBe(200)
    // A leap second is a valid HTTP-date: 11:59:60 is the instant of 12:00:00, not 11:59:00.
    expect(await get({ 'if-modified-since': 'Sun, 01 Feb 2026 11:59:60 GMT' })).toBe(304)
  })

  it('ignores an If-Modified-Since that is no valid date (not a 304)', async () => {
    for (const value of [
      'Tue, 31 Feb 2026 08:00:00 GMT', // read as 3 March
      'Mon, 30 Feb 2026 08:00:00 GMT',
      'Sun, 01 Feb 2026 24:00:00 GMT',
      'Sun, 01 Feb 2026 12:60:00 GMT',
      'Sun, 01 Feb 2026 12:00:61 GMT',
      'Sun, 32 Jan 2026 12:00:00 GMT',
      'Sunday, 31-Apr-26 12:00:00 GMT',
      'Sat Feb 29 12:00:00 2026',
      'Sun, 01 Feb 2026 12:00:00 +0000 GMT',
      'Sun, 01 Feb 2026 12:00:00 EST GMT',
      '01 Feb 2026 12:00:00 GMT',
      'Sun, 1 Feb 2026 12:00:00 GMT extra',
    ]) {
      expect(await get({ 'if-modified-since': value }), value).toBe(200)
    }
  })

  it('ignores an If-Unmodified-Since that is no valid date (not a 412)', async () => {
    expect(await get({ 'if-unmodified-since': 'Sun, 01 Feb 2026 11:59:59 GMT' })).toBe(412)
    expect(await get({ 'if-unmodified-since': 'Sun, 01 Feb 2026 12:00:00 GMT' })).toBe(200)
    // No second 61: Date.parse read it as 11:59:00, before the file, and answered 412.
    expect(await get({ 'if-unmodified-since': 'Sun, 01 Feb 2026 11:59:61 GMT' })).toBe(200)
  })
})

// Date.UTC reads a year 0 to 99 as 1900 + year: `Sat, 01 Jan 0094` was taken for 1 January 1994,
// and a file dated between the two answered 304 to an If-Modified-Since it was modified after.
describe('an HTTP-date of a year below 100', () => {
  it('is that year, not 1900 + year (IMF-fixdate and asctime)', async () => {
    // The file was modified after the year 94: a 200, not a 304.
    expect(await get({ 'if-modified-since': 'Sat, 01 Jan 0094 00:00:00 GMT' }, 'old.txt')).toBe(200)
    expect(await get({ 'if-modified-since': 'Sat Jan  1 00:00:00 0094' }, 'old.txt')).toBe(200)
    // Against a date in 1994 the file is unmodified: the 304 still comes.
    expect(await get({ 'if-modified-since': 'Sat, 01 Jan 1994 00:00:00 GMT' }, 'old.txt')).toBe(304)
  })

  it('knows the year 0 was a leap year, as 1900 was not', async () => {
    // 29 February 0000 exists (proleptic Gregorian): a date, and the file is newer.
    const leapDay = 'Tue, 29 Feb 0000 00:00:00 GMT'
    expect(await get({ 'if-modified-since': leapDay }, 'old.txt')).toBe(200)
    expect(await get({ 'if-unmodified-since': leapDay }, 'old.txt')).toBe(412)
  })
})
