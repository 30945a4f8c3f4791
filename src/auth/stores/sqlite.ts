/**
 * The embedded stores on SQLite (better-sqlite3). The file and its folder are created on first
 * use; WAL, a short busy timeout and retries from timers (sqlite-busy.ts) let `fw serve --workers`
 * processes share it without blocking the event loop on a lock. The user store is in
 * sqlite-users.ts, the refresh-token store (rotation, revocation) in sqlite-refresh-tokens.ts.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { tableNames, type Database, type TableNames } from './types.js'
import { revokedTokensTable, SqliteRevokedTokens } from './revoked-tokens.js'
import { preparer, type Db, type Prepare } from './sqlite-prepare.js'
import { BUSY_TIMEOUT_MS, BusyGate } from './sqlite-busy.js'
import { SqliteUserStore } from './sqlite-users.js'
import { SqliteRefreshTokenStore } from './sqlite-refresh-tokens.js'

export interface SqliteOptions {
  /** Prefix of the table names (tests use one per file). */
  tablePrefix?: string | undefined
  /**
   * How long a store call waits in all for a lock another connection holds, in milliseconds, then
   * fails with SQLITE_BUSY (a 503). Default 5000; the event loop is blocked 50 ms at most meanwhile.
   */
  busyBudgetMs?: number | undefined
}

/**
 * Opens (creating when missing) a SQLite database; `:memory:` works. The schema is set up at once:
 * a lock held by another connection while it must change (a new file) fails it with SQLITE_BUSY
 * after 50 ms; `openSqliteAsync` waits for that lock instead.
 * @example
 * const db = openSqlite('.fw/app.db')
 * await db.users.create({ email: 'ada@example.com', name: 'Ada', passwordHash })
 */
export function openSqlite(path: string, options: SqliteOptions = {}): Database {
  const opened = connect(path, options)
  try {
    setUp(opened.db, path, opened.prepare, opened.tables)
  } catch (error) {
    // createAuth opens again on the next request after a failure: a database left open here (a
    // file that is not one, a locked one) kept a file descriptor per request, up to EMFILE.
    opened.db.close()
    throw error
  }
  return stores(opened)
}

/**
 * `openSqlite`, with the schema's setup retried from timers (within the budget) while another
 * connection holds a lock: processes starting together (`fw serve --workers`) set up a new file.
 * @example
 * const db = await openSqliteAsync('.fw/app.db')
 */
export async function openSqliteAsync(
  path: string,
  options: SqliteOptions = {},
): Promise<Database> {
  const opened = connect(path, options)
  // Run again whole after SQLITE_BUSY: every step of the setup is idempotent.
  try {
    await opened.gate.write(() => setUp(opened.db, path, opened.prepare, opened.tables))
  } catch (error) {
    opened.db.close() // as openSqlite does
    throw error
  }
  return stores(opened)
}

interface Opened {
  db: Db
  prepare: Prepare
  tables: TableNames
  gate: BusyGate
}

function connect(path: string, options: SqliteOptions): Opened {
  const tables = tableNames(options.tablePrefix)
  if (path !== ':memory:' && path !== '') makeDirectory(dirname(path))
  // The busy timeout SQLite waits for a lock in this thread; longer waits are BusyGate's.
  const db = new BetterSqlite3(path, { timeout: BUSY_TIMEOUT_MS })
  return {
    db,
    prepare: preparer(db),
    tables,
    gate: new BusyGate({ budgetMs: options.busyBudgetMs }),
  }
}

function stores({ db, prepare, tables, gate }: Opened): Database {
  return {
    kind: 'sqlite',
    users: new SqliteUserStore(prepare, tables, gate),
    refreshTokens: new SqliteRefreshTokenStore(db, prepare, tables, gate),
    revokedTokens: new SqliteRevokedTokens(prepare, tables.revokedTokens, gate),
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

function setUp(db: Db, path: string, prepare: Prepare, tables: TableNames): void {
  // exec, not pragma(): pragma() prepares a statement per call, garbage at once (see preparer).
  if (path !== ':memory:' && path !== '') db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA foreign_keys = ON')
  migrate(db, prepare, tables)
}

function migrate(db: Db, prepare: Prepare, t: TableNames): void {
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
    if (present.has(name)) continue
    try {
      db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`)
    } catch (error) {
      // Added meanwhile by another process opening the same older file (hosts or `--workers`
      // starting together): all but the first failed their open with this. No write lock is
      // taken to check, so opening a current file never waits for another connection's writes.
      if (!String((error as Error).message).startsWith('duplicate column name')) throw error
    }
  }
}
