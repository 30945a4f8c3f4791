/**
 * The embedded stores on SQLite (better-sqlite3). The file and its folder are created on first
 * use; WAL and a busy timeout let `fw serve --workers` processes share it. Rotation runs in an
 * IMMEDIATE transaction, so concurrent refreshes (threads or processes) are serialised.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import {
  accessMove,
  refreshTokenRow,
  DuplicateEmailError,
  emailLookupKeys,
  normalizeEmail,
  parseRoles,
  tableNames,
  type Database,
  type AccessMove,
  type AccessTokenRef,
  type NewRefreshToken,
  type NextRefreshToken,
  type NewUser,
  type PublicUser,
  type RefreshTokenRecord,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './types.js'
import { revokedTokensTable, SqliteRevokedTokens } from './revoked-tokens.js'

type Db = BetterSqlite3.Database

// Node 24+ (see preparer): the better-sqlite3 objects this process made, kept from the GC.
const GC_ABORTS = Number(process.versions.node.split('.')[0]) >= 24
const RETAINED: unknown[] = []

/** `db.prepare(sql)`, but each SQL text prepared once per database and reused (see `preparer`). */
type Prepare = <P extends unknown[] = unknown[], R = unknown>(
  sql: string,
) => BetterSqlite3.Statement<P, R>

/**
 * Statements prepared once per database and kept: no SQL is parsed again per call, and no
 * statement becomes garbage while the database is in use. The second matters on Node 24, where
 * the GC destroying a better-sqlite3 12 object at the wrong moment aborts the process: Node 24's
 * ObjectWrap looks up the Node environment of the current context, which a GC run from a
 * microtask may not have (`Assertion failed: (env) != nullptr`; better-sqlite3 13 fixes it, but
 * needs Node 22). There, a database and its statements are also kept after close(): a process
 * opens few, and none is then ever destroyed by the GC.
 */
function preparer(db: Db): Prepare {
  const prepared = new Map<string, BetterSqlite3.Statement>()
  if (GC_ABORTS) RETAINED.push(db, prepared)
  return <P extends unknown[], R>(sql: string) => {
    let statement = prepared.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      prepared.set(sql, statement)
    }
    return statement as unknown as BetterSqlite3.Statement<P, R>
  }
}
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
  if (path !== ':memory:' && path !== '') makeDirectory(dirname(path))
  const db = new BetterSqlite3(path)
  const prepare = preparer(db)
  // exec, not pragma(): pragma() prepares a statement per call, garbage at once (see preparer).
  db.exec('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:' && path !== '') db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA foreign_keys = ON')
  const tables = tableNames(options.tablePrefix)
  migrate(db, prepare, tables)
  return {
    kind: 'sqlite',
    users: new SqliteUserStore(prepare, tables),
    refreshTokens: new SqliteRefreshTokenStore(db, prepare, tables),
    revokedTokens: new SqliteRevokedTokens(prepare, tables.revokedTokens),
    close: async () => void db.close(),
  }
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdirSync never returns for a path under /proc
 * (sqlite:/proc/x/app.db spun the CPU forever); here a directory that cannot be made fails at once.
 */
function makeDirectory(dir: string): void {
  if (existsSync(dir)) return
  const parent = dirname(dir)
  if (parent !== dir) makeDirectory(parent)
  try {
    mkdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

function migrate(db: Db, prepare: Prepare, t: Tables): void {
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
      access_jti TEXT,
      access_expires_at INTEGER,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%S', 'now'))
    );
    ${revokedTokensTable(t.revokedTokens, 'INTEGER')};`)
  // Tables created by an older fw, or by hand from the spec's three columns, gain what is missing.
  addMissingColumns(db, prepare, t.users, { roles: `TEXT NOT NULL DEFAULT '[]'` })
  addMissingColumns(db, prepare, t.refreshTokens, {
    family_id: `TEXT NOT NULL DEFAULT ''`,
    rotated_at: 'TEXT',
    revoked: 'INTEGER NOT NULL DEFAULT 0',
    // The access token issued with each refresh token (its jti, its exp in Unix seconds).
    access_jti: 'TEXT',
    access_expires_at: 'INTEGER',
  })
  db.exec(`CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_family_idx ON ${t.refreshTokens} (family_id);
    CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_user_idx ON ${t.refreshTokens} (user_id);
    CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_expires_idx ON ${t.refreshTokens} (expires_at);
    CREATE INDEX IF NOT EXISTS ${t.refreshTokens}_access_idx ON ${t.refreshTokens} (access_jti);`)
}

function addMissingColumns(
  db: Db,
  prepare: Prepare,
  table: string,
  columns: Record<string, string>,
): void {
  const info = prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all()
  const present = new Set(info.map((c) => c.name))
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
  readonly #prepare: Prepare
  readonly #t: Tables

  constructor(prepare: Prepare, tables: Tables) {
    this.#prepare = prepare
    this.#t = tables
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const find = this.#prepare<[string], UserRow>(`SELECT * FROM ${this.#t.users} WHERE email = ?`)
    for (const key of emailLookupKeys(email)) {
      const row = find.get(key)
      if (row) return toUser(row)
    }
    return null
  }

  async findById(id: number): Promise<UserRecord | null> {
    if (!Number.isSafeInteger(id)) return null
    return toUser(
      this.#prepare<[number], UserRow>(`SELECT * FROM ${this.#t.users} WHERE id = ?`).get(id),
    )
  }

  async create(user: NewUser): Promise<UserRecord> {
    const email = normalizeEmail(user.email)
    try {
      const row = this.#prepare<[string, string, string, string], UserRow>(
        `INSERT INTO ${this.#t.users} (email, name, password_hash, roles) VALUES (?, ?, ?, ?) RETURNING *`,
      ).get(email, user.name, user.passwordHash, JSON.stringify(user.roles ?? []))
      return toUser(row)!
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new DuplicateEmailError(email)
      throw error
    }
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<PublicUser[]> {
    const rows = this.#prepare<[number, number], UserRow>(
      `SELECT * FROM ${this.#t.users} ORDER BY id LIMIT ? OFFSET ?`,
    ).all(options.limit ?? -1, options.offset ?? 0)
    return rows.map((row) => ({
      id: row.id,
      email: row.email,
      name: row.name,
      roles: parseRoles(row.roles),
    }))
  }

  async updatePasswordHash(id: number, passwordHash: string): Promise<void> {
    this.#prepare(`UPDATE ${this.#t.users} SET password_hash = ? WHERE id = ?`).run(
      passwordHash,
      id,
    )
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
  readonly #prepare: Prepare
  readonly #t: Tables
  readonly #rotate: (tokenHash: string, next: NextRefreshToken, now: string) => RotateResult

  constructor(db: Db, prepare: Prepare, tables: Tables) {
    this.#prepare = prepare
    this.#t = tables
    const rotate = db.transaction((tokenHash: string, next: NextRefreshToken, now: string) =>
      this.#rotateNow(tokenHash, next, now),
    )
    this.#rotate = (...args) => rotate.immediate(...args)
  }

  async insert(record: NewRefreshToken): Promise<void> {
    this.#insert(record)
  }

  async find(tokenHash: string): Promise<RefreshTokenRecord | null> {
    return toToken(
      this.#prepare<[string], TokenRow>(
        `SELECT * FROM ${this.#t.refreshTokens} WHERE token = ?`,
      ).get(tokenHash),
    )
  }

  async rotate(tokenHash: string, next: NextRefreshToken, now: string): Promise<RotateResult> {
    return this.#rotate(tokenHash, next, now)
  }

  async revokeFamily(familyId: string): Promise<number> {
    return this.#prepare(
      `UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ? AND revoked = 0`,
    ).run(familyId).changes
  }

  async revokeUser(userId: number): Promise<number> {
    return this.#prepare(
      `UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE user_id = ? AND revoked = 0`,
    ).run(userId).changes
  }

  async replaceAccess(previousJti: string, next: AccessTokenRef): Promise<AccessMove> {
    const rows = this.#prepare<[string, number, string], { revoked: number }>(
      `UPDATE ${this.#t.refreshTokens} SET access_jti = ?, access_expires_at = ? WHERE access_jti = ?
         RETURNING revoked`,
    ).all(next.jti, next.expiresAt, previousJti)
    return accessMove(rows.map((r) => r.revoked !== 0))
  }

  async liveAccessTokens(
    by: 'family_id' | 'user_id',
    value: string | number,
    now: string,
  ): Promise<AccessTokenRef[]> {
    return this.#prepare<[string | number, string], AccessTokenRef>(
      `SELECT access_jti AS jti, access_expires_at AS expiresAt FROM ${this.#t.refreshTokens}
         WHERE ${by === 'user_id' ? 'user_id' : 'family_id'} = ? AND access_jti IS NOT NULL
           AND access_expires_at > CAST(strftime('%s', ?) AS INTEGER)`,
    ).all(value, now)
  }

  async purgeExpired(now: string): Promise<number> {
    return this.#prepare(`DELETE FROM ${this.#t.refreshTokens} WHERE expires_at <= ?`).run(now)
      .changes
  }

  #insert(record: NewRefreshToken): void {
    this.#prepare(
      `INSERT INTO ${this.#t.refreshTokens} (user_id, token, expires_at, family_id, access_jti, access_expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(...refreshTokenRow(record))
  }

  #rotateNow(tokenHash: string, next: NextRefreshToken, now: string): RotateResult {
    const current = this.#prepare<[string, string, string], { user_id: number; family_id: string }>(
      // A record from before rotation (no family) starts its own family, named after itself.
      `UPDATE ${this.#t.refreshTokens} SET rotated_at = ?, family_id = CASE WHEN family_id = '' THEN token ELSE family_id END
         WHERE token = ? AND rotated_at IS NULL AND revoked = 0 AND expires_at > ? RETURNING user_id, family_id`,
    ).get(now, tokenHash, now)
    if (current) {
      this.#insert({ ...next, userId: current.user_id, familyId: current.family_id })
      return { status: 'rotated', userId: current.user_id, familyId: current.family_id }
    }
    const used = toToken(
      this.#prepare<[string], TokenRow>(
        `SELECT * FROM ${this.#t.refreshTokens} WHERE token = ?`,
      ).get(tokenHash),
    )
    if (used === null || used.rotated_at === null) return { status: 'invalid' }
    this.#prepare(`UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ?`).run(
      used.family_id,
    )
    // Read whether or not this call revoked the family: a theft answered 503 (the revocation list
    // was down) revokes its access tokens when the stolen token is presented again.
    const accessTokens = this.#prepare<[string, string], AccessTokenRef>(
      `SELECT access_jti AS jti, access_expires_at AS expiresAt FROM ${this.#t.refreshTokens}
         WHERE family_id = ? AND access_jti IS NOT NULL AND access_expires_at > CAST(strftime('%s', ?) AS INTEGER)`,
    ).all(used.family_id, now)
    return { status: 'reused', userId: used.user_id, familyId: used.family_id, accessTokens }
  }
}
