/**
 * openSqlite creates the database's directory. Node's recursive mkdirSync never returns for a
 * path under /proc, so DATABASE_URL=sqlite:/proc/x/app.db hung the first login with the CPU
 * spinning; now it fails at once (the endpoints answer 503, the reason logged).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqlite } from '../../src/auth/stores/sqlite.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-sqlite-dir-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the SQLite database directory', () => {
  it('is created, parents included', async () => {
    const path = join(dir, 'a', 'b', 'app.db')
    const db = openSqlite(path)
    await db.close()
    expect(existsSync(path)).toBe(true)
  })

  // In a child process: the old code blocked its thread for good, past any test timeout.
  it.runIf(existsSync('/proc/self'))(
    'fails at once when it cannot be made, even under /proc',
    () => {
      const module = new URL('../../dist/auth/stores/sqlite.js', import.meta.url).href
      const child = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { openSqlite } from ${JSON.stringify(module)}
         try { openSqlite('/proc/fw-missing/data/app.db') } catch (error) { console.log(error.code) }`,
        ],
        { encoding: 'utf8', timeout: 10_000 },
      )
      expect(child.error).toBeUndefined()
      expect(child.stdout.trim()).toBe('ENOENT')
    },
  )
})
