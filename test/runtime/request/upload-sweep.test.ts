/**
 * Temp files of a process that was killed (SIGKILL, the out-of-memory killer) before it could
 * remove them: the first upload of a later process removes them from its upload folder. Nothing
 * did, and they piled up.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eventually, listDir, MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()
const HEX = 'ab'.repeat(16)

describe('temp files a killed process left', () => {
  it('are removed by the first upload; those of running processes and other files stay', async () => {
    const dir = await freshDir()
    // A process that has exited: its pid names no running process now.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
    const deadPid = Number(gone.stdout.toString())
    const left = `fw-upload-${deadPid}-${HEX}`
    const mine = `fw-upload-${process.pid}-${HEX}`
    const others = ['fw-upload-' + HEX, 'notes.txt', `fw-upload-${deadPid}-x`]
    for (const name of [left, mine, ...others]) writeFileSync(join(dir, name), 'x')
    const { port } = await serve({ uploadDir: dir })
    const body = multipart([{ name: 'f', filename: 'a.txt', content: 'hello' }])
    const res = await send(port, { headers: { 'content-type': MULTIPART_TYPE }, body })
    expect(res.status).toBe(200)
    expect(await eventually(async () => !(await listDir(dir)).includes(left))).toBe(true)
    expect((await listDir(dir)).sort()).toEqual([mine, ...others].sort())
  })
})
