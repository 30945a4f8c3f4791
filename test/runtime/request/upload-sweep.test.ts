/**
 * Temp files of a process killed outright (SIGKILL, the out-of-memory killer), which could not
 * remove them: an upload removes from its folder fw's temp files not written to for a day. They
 * stayed for good. Younger ones may be a live upload of another process, and stay.
 */
import { lutimesSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { STALE_MS, sweepNow } from '../../../src/runtime/request/upload-sweep.js'
import { eventually, listDir, MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()

const name = (digit: string): string => `fw-upload-${digit.repeat(32)}`
const dayOld = (): number => (Date.now() - STALE_MS - 60_000) / 1000

describe('temp files a killed process left', () => {
  it('are removed by an upload to their folder', async () => {
    const dir = await freshDir()
    writeFileSync(join(dir, name('a')), 'x')
    utimesSync(join(dir, name('a')), dayOld(), dayOld())
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([{ name: 'f', filename: 'a.txt', content: 'hello' }])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(await eventually(async () => (await listDir(dir)).length === 0)).toBe(true)
  })

  it('removes only day-old regular files named as fw names them', async () => {
    const dir = await freshDir()
    const stale = name('a')
    const fresh = name('b')
    const others = ['notes.txt', 'fw-upload-short']
    for (const file of [stale, fresh, ...others]) writeFileSync(join(dir, file), 'x')
    for (const file of [stale, ...others]) utimesSync(join(dir, file), dayOld(), dayOld())
    // A day-old link named like ours, to a day-old file, and a day-old folder so named: kept.
    symlinkSync(join(dir, 'notes.txt'), join(dir, name('c')))
    lutimesSync(join(dir, name('c')), dayOld(), dayOld())
    mkdirSync(join(dir, name('d')))
    utimesSync(join(dir, name('d')), dayOld(), dayOld())
    await sweepNow(dir)
    expect((await listDir(dir)).sort()).toEqual([fresh, name('c'), name('d'), ...others].sort())
  })
})
