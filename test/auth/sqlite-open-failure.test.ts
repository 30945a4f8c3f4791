/**
 * A SQLite database that opens but cannot be set up (a file that is not a database, a locked
 * one) was left open: createAuth opens again on the next request after a failure, so every
 * request kept one more file descriptor until the process ran out of them (EMFILE), the whole
 * server with it. The PostgreSQL store already ended its pool when the migration failed.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqlite } from '../../src/auth/stores/sqlite.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-stores-audit-21-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const openFiles = (): number => readdirSync('/proc/self/fd').length

describe('a SQLite database that fails to open', () => {
  it.runIf(existsSync('/proc/self/fd'))('is closed, not left holding its file', () => {
    const path = join(dir, 'not-a-database.db')
    writeFileSync(path, 'not a SQLite database: '.repeat(20))
    const before = openFiles()
    // Synchronous: nothing else in this process opens a file meanwhile; 20 tries, 20 leaks before.
    for (let i = 0; i < 20; i++) expect(() => openSqlite(path)).toThrow(/not a database/)
    expect(openFiles() - before).toBeLessThan(3)
  })
})
