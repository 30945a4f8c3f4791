/**
 * The embedded stores on SQLite (better-sqlite3). The file and its folder are created on first
 * use; WAL and a busy timeout let `fw serve --workers` processes share it. Rotation runs in an
 * IMMEDIATE transaction, so concurrent refreshes (threads or processes) are serialised.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import {
  DuplicateEmailError,
  emailLookupKeys,
  normalizeEmail,
  parseRoles,
  tableNames,
  type Database,
  type NewRefreshToken,
  type NewUser,
  type PublicUser,
  type RefreshTokenRecord,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './types.js'

type Db = BetterSqlite3.Database
type Tables = ReturnType<typeof tableNames>

interface UserRow {
  id: number
  email: string
  name: string
  roles: string
  password_hash: string
}

interface TokenRow {
  user_id: number
  token: string
  expires_at: string
  family_id: string
  rotated_at: string | null
  revoked: number
}

export interface SqliteOptions {
  /** Prefix of the table names (tests use one per file). */
  tablePrefix?: string
}

/**
 * Opens (creating when missing) a SQLite database; `:memory:` works.
 * @example
 * const db = openSqlite('.fw/app.db')
 * await db.users.create({ email: 'ada@example.com', name: 'Ada', passwordHash })
 */
export function openSqlite(path: string, options: SqliteOptions = {}): Database {
  if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true })
  const db = new BetterSqlite3(path)
  db.pragma('busy_timeout = 5000')
  if (path !== ':memory:' && path !== '') db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  const tables = tableNames(options.tablePrefix)
  migrate(db, tables)
  return {
    kind: 'sqlite',
    users: new SqliteUserStore(db, tables),
    refreshTokens: new SqliteRefreshTokenStore(db, tables),
    close: async () => void db.close(),
  }
}

function migrate(db: Db, t: Tables): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t.users} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      email TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      roles TEXT NOT NULL DEFAULT '[]',
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%S', 'now'))
    );
    CREATE TABLE IF NOT EXISTS ${t.refreshTokens} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id INTEGER NOT NULL REFERENCES ${t.users}(id) ON DELETE CASCADE,
      token TEXT NOT NULL UNIQUE,
      expires_at TEXT NOT NULL,
      family_id TEXT NOT NULL DEFAULT '',
      rotated_at TEXT,
      revoked INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%S', 'now'))
    );`)
  // Tables created by an older fw, or by hand from the spec's three columns, gain what is missing.
  addMissingColumns(db, t.users, { roles: `TEXT NOT NULL DEFAULT '[]'` })
  addMissingColumns(db, t.refreshTokens, {
    family_id: `TEXT NOT NULL DEFAULT ''`,
    rotated_at: 'TEXT',
    revoked: 'INTEGER NOT NULL DEFAULT 0',
  })
  db.exec(`CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_family_idx ON ${t.refreshTokens} (family_id);
    CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_user_idx ON ${t.refreshTokens} (user_id);
    CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_expires_idx ON ${t.refreshTokens} (expires_at);`)
}

function addMissingColumns(db: Db, table: string, columns: Record<string, string>): void {
  const present = new Set(
    (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name),
  )
  for (const [name, type] of Object.entries(columns)) {
    if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`)
  }
}

const toUser = (row: UserRow | undefined): UserRecord | null =>
  row
    ? {
        id: row.id,
        email: row.email,
        name: row.name,
        roles: parseRoles(row.roles),
        password_hash: row.password_hash,
      }
    : null

class SqliteUserStore implements UserStore {
  readonly #db: Db
  readonly #t: Tables

  constructor(db: Db, tables: Tables) {
    this.#db = db
    this.#t = tables
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const find = this.#db.prepare<[string], UserRow>(
      `SELECT * FROM ${this.#t.users} WHERE email = ?`,
    )
    for (const key of emailLookupKeys(email)) {
      const row = find.get(key)
      if (row) return toUser(row)
    }
    return null
  }

  async findById(id: number): Promise<UserRecord | null> {
    if (!Number.isSafeInteger(id)) return null
    return toUser(
      this.#db.prepare<[number], UserRow>(`SELECT * FROM ${this.#t.users} WHERE id = ?`).get(id),
    )
  }

  async create(user: NewUser): Promise<UserRecord> {
    const email = normalizeEmail(user.email)
    try {
      const row = this.#db
        .prepare<[string, string, string, string], UserRow>(
          `INSERT INTO ${this.#t.users} (email, name, password_hash, roles) VALUES (?, ?, ?, ?) RETURNING *`,
        )
        .get(email, user.name, user.passwordHash, JSON.stringify(user.roles ?? []))
      return toUser(row)!
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new DuplicateEmailError(email)
      throw error
    }
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<PublicUser[]> {
    const rows = this.#db
      .prepare<[number, number], UserRow>(
        `SELECT * FROM ${this.#t.users} ORDER BY id LIMIT ? OFFSET ?`,
      )
      .all(options.limit ?? -1, options.offset ?? 0)
    return rows.map((row) => ({
      id: row.id,
      email: row.email,
      name: row.name,
      roles: parseRoles(row.roles),
    }))
  }

  async updatePasswordHash(id: number, passwordHash: string): Promise<void> {
    this.#db
      .prepare(`UPDATE ${this.#t.users} SET password_hash = ? WHERE id = ?`)
      .run(passwordHash, id)
  }
}

const toToken = (row: TokenRow | undefined): RefreshTokenRecord | null =>
  row
    ? {
        user_id: row.user_id,
        token: row.token,
        expires_at: row.expires_at,
        family_id: row.family_id,
        rotated_at: row.rotated_at,
        revoked: row.revoked !== 0,
      }
    : null

class SqliteRefreshTokenStore implements RefreshTokenStore {
  readonly #db: Db
  readonly #t: Tables
  readonly #rotate: (
    tokenHash: string,
    next: { tokenHash: string; expiresAt: string },
    now: string,
  ) => RotateResult

  constructor(db: Db, tables: Tables) {
    this.#db = db
    this.#t = tables
    const rotate = db.transaction(
      (tokenHash: string, next: { tokenHash: string; expiresAt: string }, now: string) =>
        this.#rotateNow(tokenHash, next, now),
    )
    this.#rotate = (...args) => rotate.immediate(...args)
  }

  async insert(record: NewRefreshToken): Promise<void> {
    this.#insert(record)
  }

  async find(tokenHash: string): Promise<RefreshTokenRecord | null> {
    return toToken(
      this.#db
        .prepare<[string], TokenRow>(`SELECT * FROM ${this.#t.refreshTokens} WHERE token = ?`)
        .get(tokenHash),
    )
  }

  async rotate(
    tokenHash: string,
    next: { tokenHash: string; expiresAt: string },
    now: string,
  ): Promise<RotateResult> {
    return this.#rotate(tokenHash, next, now)
  }

  async revokeFamily(familyId: string): Promise<number> {
    return this.#db
      .prepare(
        `UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ? AND revoked = 0`,
      )
      .run(familyId).changes
  }

  async revokeUser(userId: number): Promise<number> {
    return this.#db
      .prepare(`UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE user_id = ? AND revoked = 0`)
      .run(userId).changes
  }

  async purgeExpired(now: string): Promise<number> {
    return this.#db.prepare(`DELETE FROM ${this.#t.refreshTokens} WHERE expires_at <= ?`).run(now)
      .changes
  }

  #insert(record: NewRefreshToken): void {
    this.#db
      .prepare(
        `INSERT INTO ${this.#t.refreshTokens} (user_id, token, expires_at, family_id) VALUES (?, ?, ?, ?)`,
      )
      .run(record.userId, record.tokenHash, record.expiresAt, record.familyId)
  }

  #rotateNow(
    tokenHash: string,
    next: { tokenHash: string; expiresAt: string },
    now: string,
  ): RotateResult {
    const current = this.#db
      .prepare<[string, string, string], { user_id: number; family_id: string }>(
        // A record from before rotation (no family) starts its own family, named after itself.
        `UPDATE ${this.#t.refreshTokens} SET rotated_at = ?, family_id = CASE WHEN family_id = '' THEN token ELSE family_id END
         WHERE token = ? AND rotated_at IS NULL AND revoked = 0 AND expires_at > ? RETURNING user_id, family_id`,
      )
      .get(now, tokenHash, now)
    if (current) {
      this.#insert({
        userId: current.user_id,
        tokenHash: next.tokenHash,
        familyId: current.family_id,
        expiresAt: next.expiresAt,
      })
      return { status: 'rotated', userId: current.user_id, familyId: current.family_id }
    }
    const used = toToken(
      this.#db
        .prepare<[string], TokenRow>(`SELECT * FROM ${this.#t.refreshTokens} WHERE token = ?`)
        .get(tokenHash),
    )
    if (used === null || used.rotated_at === null) return { status: 'invalid' }
    this.#db
      .prepare(`UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ?`)
      .run(used.family_id)
    return { status: 'reused', userId: used.user_id, familyId: used.family_id }
  }
}
