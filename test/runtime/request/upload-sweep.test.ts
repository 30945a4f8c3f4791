/**
 * Temp files of a process killed outright (SIGKILL, the out-of-memory killer), which could not
 * remove them: an upload removes from its folder fw's temp files not written to for a day. They
 * stayed for good. Younger ones may be a live upload of another process, and stay.
 */
import { symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { STALE_MS } from '../../../src/runtime/request/upload-sweep.js'
import { eventually, listDir, MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()

const name = (digit: string): string => `fw-upload-${digit.repeat(32)}`

describe('temp files a killed process left', () => {
  it('are removed by an upload once a day old; younger ones, links and other files stay', async () => {
    const dir = await freshDir()
    const old = (Date.now() - STALE_MS - 60_000) / 1000
    const stale = name('a')
    const fresh = name('b')
    const others = ['notes.txt', 'fw-upload-short']
    for (const file of [stale, fresh, ...others]) writeFileSync(join(dir, file), 'x')
    symlinkSync(join(dir, 'notes.txt'), join(dir, name('c')))
    for (const file of [stale, ...others]) utimesSync(join(dir, file), old, old)
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([{ name: 'f', filename: 'a.txt', content: 'hello' }])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(await eventually(async () => !(await listDir(dir)).includes(stale))).toBe(true)
    expect((await listDir(dir)).sort()).toEqual([fresh, name('c'), ...others].sort())
  })
})
