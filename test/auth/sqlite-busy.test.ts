/**
 * Audit: a SQLite database locked by another process froze the whole server. better-sqlite3 is
 * synchronous and SQLite's busy handler (busy_timeout 5000) slept in the event loop's thread: each
 * auth write under a lock blocked every request for up to 5 s, and concurrent writes stacked up.
 * Now SQLite waits 50 ms at most and the store call is retried from timers, within a budget, then
 * fails as a store that is down (503). The lock here is a second connection holding
 * BEGIN IMMEDIATE, as another process (another `fw serve --workers` worker, a backup) would.
 */
import BetterSqlite3 from 'better-sqlite3'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createAuth, createUser } from '../../src/auth/auth.js'
import { openSqlite, openSqliteAsync } from '../../src/auth/stores/sqlite.js'
import type { Database } from '../../src/auth/stores/types.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import { SECRET, send, serveAuthApp } from './support.js'

const dir = tempDir('fw-sqlite-busy-')
afterAll(() => cleanupTempDirs())

// Kept from the GC until the end (see sqlite-prepare.ts: Node 24 and better-sqlite3 12).
const holders: BetterSqlite3.Database[] = []

/** A second connection to `path` holding the write lock until `release()`. */
function holdLock(path: string): { release: () => void } {
  const holder = new BetterSqlite3(path)
  holders.push(holder)
  holder.exec('BEGIN IMMEDIATE')
  return {
    release: () => {
      if (holder.inTransaction) holder.exec('COMMIT')
      holder.close()
    },
  }
}

let files = 0
function openFresh(options: { busyBudgetMs?: number } = {}): { db: Database; path: string } {
  const path = join(dir, `app-${files++}.db`)
  return { db: openSqlite(path, options), path }
}

const later = (ms: number, action: () => void): void => void setTimeout(action, ms)
const exp = (): number => Math.floor(Date.now() / 1000) + 3600
const future = '2099-01-01 00:00:00'

describe('an auth write while another connection holds the write lock', () => {
  it('lets the event loop run: a timer set before the write fires before it settles', async () => {
    const { db, path } = openFresh()
    const events: string[] = []
    const lock = holdLock(path)
    setTimeout(() => events.push('timer'), 0)
    later(100, () => {
      events.push('released')
      lock.release()
    })
    await db.revokedTokens!.insert('jti-1', exp()).then(
      () => events.push('write settled'),
      () => events.push('write failed'),
    )
    // Before, the write slept in this thread until the busy timeout: the lock, held by this very
    // process, could never be released, and the write failed before any timer ran.
    expect(events).toEqual(['timer', 'released', 'write settled'])
    await db.close()
  })

  it('succeeds once the lock is released; reads go on meanwhile; queued writes all apply', async () => {
    const { db, path } = openFresh()
    await db.revokedTokens!.insert('before', exp())
    const events: string[] = []
    const lock = holdLock(path)
    later(100, () => {
      events.push('released')
      lock.release()
    })
    const writes = ['a', 'b', 'c'].map((jti) =>
      db.revokedTokens!.insert(jti, exp()).then((stored) => {
        events.push(`write ${jti}`)
        return stored
      }),
    )
    // WAL: a read passes the write lock, and does not queue behind the waiting writes.
    const live = await db.revokedTokens!.live(0)
    events.push('read')
    expect(await Promise.all(writes)).toEqual([true, true, true])
    expect(events).toEqual(['read', 'released', 'write a', 'write b', 'write c'])
    expect(live.map((row) => row.jti)).toEqual(['before'])
    expect((await db.revokedTokens!.live(0)).map((row) => row.jti).sort()).toEqual([
      'a',
      'b',
      'before',
      'c',
    ])
    await db.close()
  })

  it('fails as a store that is down (SQLITE_BUSY) when the lock outlasts the budget', async () => {
    const { db, path } = openFresh({ busyBudgetMs: 200 })
    const lock = holdLock(path)
    const events: string[] = []
    setTimeout(() => events.push('timer'), 0)
    try {
      const failure = await db.revokedTokens!.insert('x', exp()).catch((error: unknown) => error)
      events.push('write failed')
      expect(failure).toMatchObject({ code: 'SQLITE_BUSY' })
      expect(events).toEqual(['timer', 'write failed'])
    } finally {
      lock.release()
    }
    // The lock gone, the same store works again.
    expect(await db.revokedTokens!.insert('x', exp())).toBe(true)
    await db.close()
  })

  it('retries a rotation (a transaction) whole and applies it exactly once', async () => {
    const { db, path } = openFresh()
    const user = await db.users.create({ email: 'ada@example.com', name: 'Ada', passwordHash: 'h' })
    await db.refreshTokens.insert({
      userId: user.id,
      tokenHash: 'first',
      familyId: 'family',
      expiresAt: future,
    })
    const lock = holdLock(path)
    const events: string[] = []
    setTimeout(() => events.push('timer'), 0)
    later(100, () => {
      events.push('released')
      lock.release()
    })
    const now = '2030-01-01 00:00:00'
    const rotated = await db.refreshTokens.rotate(
      'first',
      { tokenHash: 'second', expiresAt: future },
      now,
    )
    events.push('rotated')
    expect(events).toEqual(['timer', 'released', 'rotated'])
    expect(rotated).toEqual({ status: 'rotated', userId: user.id, familyId: 'family' })
    const raw = new BetterSqlite3(path, { readonly: true })
    holders.push(raw)
    const rows = raw
      .prepare('SELECT token, rotated_at, revoked FROM refresh_tokens ORDER BY id')
      .all()
    raw.close()
    expect(rows).toEqual([
      { token: 'first', rotated_at: now, revoked: 0 },
      { token: 'second', rotated_at: null, revoked: 0 },
    ])
    await db.close()
  })

  it('sets a new database up once the lock on it is released (openSqliteAsync)', async () => {
    const path = join(dir, 'new.db')
    const lock = holdLock(path)
    const events: string[] = []
    later(100, () => {
      events.push('released')
      lock.release()
    })
    const db = await openSqliteAsync(path)
    events.push('opened')
    expect(events).toEqual(['released', 'opened'])
    expect(await db.users.list()).toEqual([])
    await db.close()
  })
})

describe('POST /rt/auth/login while another connection holds the write lock', () => {
  it('answers 503 once the budget is spent, serving other requests meanwhile, then 200', async () => {
    const path = join(dir, 'http.db')
    const db = openSqlite(path, { busyBudgetMs: 200 })
    // Tells when the login reaches its write (the refresh token), to send the other request then.
    let reached = (): void => {}
    const insert = db.refreshTokens.insert.bind(db.refreshTokens)
    db.refreshTokens.insert = (record) => (reached(), insert(record))
    const auth = createAuth({ secret: SECRET, production: false, database: db })
    const app = await serveAuthApp(auth)
    try {
      await createUser(auth, { email: 'ada@example.com', name: 'Ada', password: 'correct horse' })
      const login = () =>
        send(app, 'POST', '/rt/auth/login', {
          json: { email: 'ada@example.com', password: 'correct horse' },
        })
      const lock = holdLock(path)
      const answered: string[] = []
      try {
        const writing = new Promise<void>((resolve) => (reached = resolve))
        const locked = login().then((reply) => (answered.push('login'), reply))
        await writing
        // Before, the login's write slept in the thread: this request waited for its 503.
        await send(app, 'GET', '/auth/me').then((reply) => answered.push(`me ${reply.status}`))
        const answer = await locked
        expect(answer.status).toBe(503)
        // storeCall's 503 (its message is not exposed), as for a PostgreSQL store that is down.
        expect(answer.body.error).toBe('Service Unavailable')
        expect(answered).toEqual(['me 401', 'login'])
      } finally {
        lock.release()
      }
      expect((await login()).status).toBe(200)
    } finally {
      await app.close()
      await auth.close()
    }
  })
})
