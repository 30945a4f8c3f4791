/**
 * The user and refresh-token stores against real SQLite (memory and file) and real PostgreSQL:
 * CRUD, duplicate emails, idempotent migrations (also of tables made by hand from the spec's
 * columns), rotation, reuse detection, and the rotation race.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  hashRefreshToken,
  RefreshTokens,
  REFRESH_TOKEN_TTL,
} from '../../src/auth/refresh-tokens.js'
import { openDatabase } from '../../src/auth/stores/open.js'
import { DuplicateEmailError, formatDateTime, type Database } from '../../src/auth/stores/types.js'
import { POSTGRES_URL, reachable, uniquePrefix } from './support.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-auth-stores-'))
const postgresUp = await reachable(POSTGRES_URL)
const pgPrefixes: string[] = []

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (pgPrefixes.length === 0) return
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  for (const p of pgPrefixes)
    await client.query(`DROP TABLE IF EXISTS ${p}refresh_tokens, ${p}users`)
  await client.end()
})

interface Backend {
  name: string
  available: boolean
  /** Opens a database; the same `key` opens the same tables again. */
  open(key?: string): Promise<Database>
  /** Runs raw SQL against the tables of `key` (to make legacy tables). */
  exec(key: string, sql: (prefix: string) => string): Promise<void>
}

const sqliteFile = (key: string): string => join(dir, `${key}.db`)
const pgPrefix = (key: string): string => {
  const prefix = `t_stores_${process.pid}_${key}_`
  if (!pgPrefixes.includes(prefix)) pgPrefixes.push(prefix)
  return prefix
}

/** Tables as an app might have made them by hand from the spec: only the spec's columns. */
function legacyTables(p: string, postgres: boolean): string {
  const time = postgres ? 'TIMESTAMP' : 'TEXT'
  return `
    CREATE TABLE ${p}users (
      id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, password_hash TEXT NOT NULL);
    INSERT INTO ${p}users (id, email, name, password_hash) VALUES (7, 'old@example.com', 'Old', 'h');
    CREATE TABLE ${p}refresh_tokens (user_id INTEGER NOT NULL, token TEXT NOT NULL, expires_at ${time} NOT NULL);
    INSERT INTO ${p}refresh_tokens VALUES (7, '${hashRefreshToken('a'.repeat(64))}', '2999-01-01 00:00:00');`
}

const BACKENDS: Backend[] = [
  {
    name: 'sqlite :memory:',
    available: true,
    open: () => openDatabase('sqlite::memory:'),
    exec: async () => {},
  },
  {
    name: 'sqlite file',
    available: true,
    open: (key = uniquePrefix('f')) => openDatabase(`sqlite:${sqliteFile(key)}`),
    exec: async (key, sql) => void new BetterSqlite3(sqliteFile(key)).exec(sql('')).close(),
  },
  {
    name: 'postgres',
    available: postgresUp,
    open: (key = Math.random().toString(36).slice(2, 8)) =>
      openDatabase(POSTGRES_URL, { tablePrefix: pgPrefix(key) }),
    exec: async (key, sql) => {
      const client = new pg.Client({ connectionString: POSTGRES_URL })
      await client.connect()
      await client.query(sql(pgPrefix(key)))
      await client.end()
    },
  },
]

for (const backend of BACKENDS) {
  describe.runIf(backend.available)(`stores on ${backend.name}`, () => {
    const opened: Database[] = []
    const open = async (key?: string): Promise<Database> => {
      const db = await backend.open(key)
      opened.push(db)
      return db
    }
    afterAll(async () => {
      for (const db of opened) await db.close()
    })

    it('creates, finds and lists users; emails are case-insensitive and unique', async () => {
      const { users } = await open()
      const ada = await users.create({
        email: ' Ada@Example.com ',
        name: 'Ada',
        passwordHash: 'h1',
        roles: ['admin'],
      })
      expect(ada).toEqual({
        id: expect.any(Number),
        email: 'ada@example.com',
        name: 'Ada',
        roles: ['admin'],
        password_hash: 'h1',
      })
      const bob = await users.create({ email: 'bob@example.com', name: 'Bob', passwordHash: 'h2' })
      expect(await users.findByEmail('ADA@example.com')).toEqual(ada)
      expect(await users.findById(bob.id)).toMatchObject({ email: 'bob@example.com', roles: [] })
      expect(await users.findById(999_999)).toBeNull()
      expect(await users.findByEmail('nobody@example.com')).toBeNull()
      await expect(
        users.create({ email: 'ADA@example.com', name: 'Other', passwordHash: 'h3' }),
      ).rejects.toBeInstanceOf(DuplicateEmailError)
      const list = await users.list()
      expect(list).toEqual([
        { id: ada.id, email: 'ada@example.com', name: 'Ada', roles: ['admin'] },
        { id: bob.id, email: 'bob@example.com', name: 'Bob', roles: [] },
      ])
      expect(await users.list({ limit: 1, offset: 1 })).toEqual([list[1]])
      await users.updatePasswordHash(ada.id, 'h9')
      expect((await users.findById(ada.id))!.password_hash).toBe('h9')
    })

    it('stores refresh tokens as SHA-256 with a Y-m-d H:i:s expiry 30 days out', async () => {
      const db = await open()
      const user = await db.users.create({ email: 'rt@example.com', name: 'R', passwordHash: 'h' })
      const now = Date.UTC(2030, 0, 2, 3, 4, 5)
      const token = await new RefreshTokens(db.refreshTokens, { now: () => now }).issue(user.id)
      expect(token).toMatch(/^[0-9a-f]{64}$/)
      const record = await db.refreshTokens.find(hashRefreshToken(token))
      expect(record).toMatchObject({
        user_id: user.id,
        token: hashRefreshToken(token),
        rotated_at: null,
        revoked: false,
      })
      expect(record!.expires_at).toBe(formatDateTime(now + REFRESH_TOKEN_TTL * 1000))
      expect(record!.expires_at).toBe('2030-02-01 03:04:05')
      expect(await db.refreshTokens.find(token)).toBeNull()
    })

    it('rotates once; reusing the old token revokes the whole family', async () => {
      const db = await open()
      const user = await db.users.create({ email: 'rot@example.com', name: 'R', passwordHash: 'h' })
      const refresh = new RefreshTokens(db.refreshTokens)
      const first = await refresh.issue(user.id)
      const other = await refresh.issue(user.id)
      const second = await refresh.rotate(first)
      expect(second).toMatchObject({
        status: 'rotated',
        userId: user.id,
        refreshToken: expect.stringMatching(/^[0-9a-f]{64}$/),
      })
      const next = second.status === 'rotated' ? second.refreshToken : ''
      expect((await db.refreshTokens.find(hashRefreshToken(first)))!.rotated_at).toMatch(
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
      )

      expect(await refresh.rotate(first)).toEqual({ status: 'reused' })
      expect(await refresh.rotate(next)).toEqual({ status: 'invalid' })
      expect((await db.refreshTokens.find(hashRefreshToken(next)))!.revoked).toBe(true)
      // Another login's family is untouched.
      expect((await refresh.rotate(other)).status).toBe('rotated')
    })

    it('refuses expired, unknown and malformed tokens', async () => {
      const db = await open()
      const user = await db.users.create({ email: 'exp@example.com', name: 'E', passwordHash: 'h' })
      let now = Date.now()
      const refresh = new RefreshTokens(db.refreshTokens, { now: () => now })
      const token = await refresh.issue(user.id)
      now += REFRESH_TOKEN_TTL * 1000 + 1000
      expect(await refresh.rotate(token)).toEqual({ status: 'invalid' })
      expect(await refresh.rotate('0'.repeat(64))).toEqual({ status: 'invalid' })
      for (const bad of ['', 'abc', token.toUpperCase(), `${token}0`, 42, null])
        expect(await refresh.rotate(bad)).toEqual({ status: 'invalid' })
      expect(await db.refreshTokens.purgeExpired(formatDateTime(now))).toBe(1)
      expect(await db.refreshTokens.find(hashRefreshToken(token))).toBeNull()
    })

    it('revokes every token of a user', async () => {
      const db = await open()
      const user = await db.users.create({ email: 'all@example.com', name: 'A', passwordHash: 'h' })
      const refresh = new RefreshTokens(db.refreshTokens)
      const tokens = [await refresh.issue(user.id), await refresh.issue(user.id)]
      expect(await db.refreshTokens.revokeUser(user.id)).toBe(2)
      for (const token of tokens) expect(await refresh.rotate(token)).toEqual({ status: 'invalid' })
    })

    it('records revoked tokens once each, lists the live ones, and takes one back', async () => {
      const db = await open()
      const revoked = db.revokedTokens!
      const exp = Math.floor(Date.now() / 1000) + 60
      expect(await revoked.insert('kept', exp)).toBe(true)
      expect(await revoked.insert('taken-back', exp)).toBe(true)
      expect(await revoked.insert('kept', exp)).toBe(false)
      await revoked.remove!('taken-back')
      const live = (await revoked.live(exp - 60)).map((row) => row.jti)
      expect(live).toContain('kept')
      expect(live).not.toContain('taken-back')
    })

    it('lets exactly one of 10 parallel refreshes with one token succeed', async () => {
      const db = await open()
      const user = await db.users.create({
        email: 'race@example.com',
        name: 'R',
        passwordHash: 'h',
      })
      const refresh = new RefreshTokens(db.refreshTokens)
      for (let round = 0; round < 5; round++) {
        const token = await refresh.issue(user.id)
        const outcomes = await Promise.all(Array.from({ length: 10 }, () => refresh.rotate(token)))
        expect(outcomes.filter((o) => o.status === 'rotated')).toHaveLength(1)
        expect(outcomes.filter((o) => o.status === 'reused')).toHaveLength(9)
      }
    })

    // A :memory: database is private to its connection: nothing to share or migrate.
    if (backend.name === 'sqlite :memory:') return

    it('lets one of 10 parallel refreshes over two connections succeed (regression: deadlock)', async () => {
      const key = `race${Math.random().toString(36).slice(2, 7)}`
      const [one, two] = [await open(key), await open(key)]
      const user = await one.users.create({
        email: 'race2@example.com',
        name: 'R',
        passwordHash: 'h',
      })
      const refresh = [new RefreshTokens(one.refreshTokens), new RefreshTokens(two.refreshTokens)]
      for (let round = 0; round < 5; round++) {
        const token = await refresh[0]!.issue(user.id)
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) => refresh[i % 2]!.rotate(token)),
        )
        expect(outcomes.filter((o) => o.status === 'rotated')).toHaveLength(1)
        expect(outcomes.filter((o) => o.status === 'reused')).toHaveLength(9)
      }
    })

    it('migrates idempotently, also tables made from the spec columns', async () => {
      const key = `legacy${Math.random().toString(36).slice(2, 7)}`
      await backend.exec(key, (p) => legacyTables(p, backend.name === 'postgres'))
      const db = await open(key)
      await open(key)
      expect(await db.users.findById(7)).toEqual({
        id: 7,
        email: 'old@example.com',
        name: 'Old',
        roles: [],
        password_hash: 'h',
      })
      const refresh = new RefreshTokens(db.refreshTokens)
      const rotated = await refresh.rotate('a'.repeat(64))
      expect(rotated.status).toBe('rotated')
      expect(await refresh.rotate('a'.repeat(64))).toEqual({ status: 'reused' })
      const successor = rotated.status === 'rotated' ? rotated.refreshToken : ''
      expect(await refresh.rotate(successor)).toEqual({ status: 'invalid' })
    })
  })
}

describe('openDatabase', () => {
  it('creates the SQLite file and its folder on first use', async () => {
    const db = await openDatabase(`sqlite:${join(dir, 'nested', 'deeper', 'app.db')}`)
    await db.users.create({ email: 'x@example.com', name: 'X', passwordHash: 'h' })
    await db.close()
    const again = await openDatabase(`sqlite://${join(dir, 'nested', 'deeper', 'app.db')}`)
    expect(await again.users.findByEmail('x@example.com')).not.toBeNull()
    await again.close()
  })

  it('refuses URLs it does not know, without echoing credentials', async () => {
    await expect(openDatabase('mysql://root:hunter2@db/app')).rejects.toThrow(
      /mysql:\/\/\*\*\*@db\/app/,
    )
    await expect(openDatabase('sqlite:')).rejects.toThrow(/names no file/)
  })

  it.runIf(postgresUp)('reports an unreachable PostgreSQL as an error', async () => {
    await expect(openDatabase('postgres://postgres@127.0.0.1:1/test')).rejects.toThrow()
  })
})
