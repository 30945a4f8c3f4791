/**
 * The revoked-token tables of both stores (see RevokedTokenStore): a jti and the Unix second its
 * token expires, so the in-process revocation list can be rebuilt after a restart.
 */
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'
import type { RevokedTokenStore } from './types.js'
import type { BusyGate } from './sqlite-busy.js'

type Prepare = (sql: string) => BetterSqlite3.Statement

/** The table, created on first use by each store's migration. */
export function revokedTokensTable(table: string, integer: 'INTEGER' | 'BIGINT'): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
    jti TEXT NOT NULL PRIMARY KEY,
    expires_at ${integer} NOT NULL)`
}

/**
 * Each call runs in the gate (see BusyGate): a lock held by another connection is waited for
 * from timers, not in the event loop.
 * @example new SqliteRevokedTokens(prepare, 'revoked_tokens', new BusyGate())
 */
export class SqliteRevokedTokens implements RevokedTokenStore {
  readonly #prepare: Prepare
  readonly #table: string
  readonly #gate: BusyGate

  constructor(prepare: Prepare, table: string, gate: BusyGate) {
    this.#prepare = prepare
    this.#table = table
    this.#gate = gate
  }

  async insert(jti: string, expiresAt: number): Promise<boolean> {
    const sql = `INSERT INTO ${this.#table} (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING`
    return this.#gate.write(() => this.#prepare(sql).run(jti, expiresAt).changes === 1)
  }

  async live(now: number): Promise<Array<{ jti: string; expiresAt: number }>> {
    const sql = `SELECT jti, expires_at AS expiresAt FROM ${this.#table} WHERE expires_at > ?`
    return this.#gate.read(
      () => this.#prepare(sql).all(now) as Array<{ jti: string; expiresAt: number }>,
    )
  }

  async purgeExpired(now: number): Promise<number> {
    return this.#gate.write(
      () => this.#prepare(`DELETE FROM ${this.#table} WHERE expires_at <= ?`).run(now).changes,
    )
  }

  async remove(jti: string): Promise<void> {
    await this.#gate.write(() => this.#prepare(`DELETE FROM ${this.#table} WHERE jti = ?`).run(jti))
  }
}

/** @example new PostgresRevokedTokens(pool, 'revoked_tokens') */
export class PostgresRevokedTokens implements RevokedTokenStore {
  readonly #pool: pg.Pool
  readonly #table: string

  constructor(pool: pg.Pool, table: string) {
    this.#pool = pool
    this.#table = table
  }

  async insert(jti: string, expiresAt: number): Promise<boolean> {
    const result = await this.#pool.query(
      `INSERT INTO ${this.#table} (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING`,
      [jti, expiresAt],
    )
    return result.rowCount === 1
  }

  async live(now: number): Promise<Array<{ jti: string; expiresAt: number }>> {
    const { rows } = await this.#pool.query(
      `SELECT jti, expires_at FROM ${this.#table} WHERE expires_at > $1`,
      [now],
    )
    return rows.map((row: { jti: string; expires_at: string }) => ({
      jti: row.jti,
      expiresAt: Number(row.expires_at),
    }))
  }

  async purgeExpired(now: number): Promise<number> {
    const result = await this.#pool.query(`DELETE FROM ${this.#table} WHERE expires_at <= $1`, [
      now,
    ])
    return result.rowCount ?? 0
  }

  async remove(jti: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#table} WHERE jti = $1`, [jti])
  }
}
