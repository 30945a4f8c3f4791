/** The user store on PostgreSQL (see postgres.ts for the pool and the schema). */
import type pg from 'pg'
import {
  DuplicateEmailError,
  emailLookupKeys,
  normalizeEmail,
  publicUser,
  userRecord,
  type NewUser,
  type PublicUser,
  type TableNames,
  type UserRecord,
  type UserStore,
} from './types.js'

const USER_COLUMNS = 'id, email, name, roles, password_hash'

/** @example new PostgresUserStore(pool, tableNames()) */
export class PostgresUserStore implements UserStore {
  readonly #pool: pg.Pool
  readonly #t: TableNames

  constructor(pool: pg.Pool, tables: TableNames) {
    this.#pool = pool
    this.#t = tables
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    // PostgreSQL text cannot hold U+0000: no stored email has one, and pg would fail the query.
    if (email.includes('\u0000')) return null
    for (const key of emailLookupKeys(email)) {
      const { rows } = await this.#pool.query(
        `SELECT ${USER_COLUMNS} FROM ${this.#t.users} WHERE email = $1`,
        [key],
      )
      if (rows[0]) return userRecord(rows[0])
    }
    return null
  }

  async findById(id: number): Promise<UserRecord | null> {
    if (!Number.isSafeInteger(id)) return null
    const { rows } = await this.#pool.query(
      `SELECT ${USER_COLUMNS} FROM ${this.#t.users} WHERE id = $1`,
      [id],
    )
    return userRecord(rows[0])
  }

  async create(user: NewUser): Promise<UserRecord> {
    const email = normalizeEmail(user.email)
    try {
      const { rows } = await this.#pool.query(
        `INSERT INTO ${this.#t.users} (email, name, password_hash, roles) VALUES ($1, $2, $3, $4::jsonb) RETURNING ${USER_COLUMNS}`,
        [email, user.name, user.passwordHash, JSON.stringify(user.roles ?? [])],
      )
      return userRecord(rows[0])!
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new DuplicateEmailError(email)
      throw error
    }
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<PublicUser[]> {
    const { rows } = await this.#pool.query(
      `SELECT ${USER_COLUMNS} FROM ${this.#t.users} ORDER BY id LIMIT $1 OFFSET $2`,
      [options.limit ?? null, options.offset ?? 0],
    )
    return rows.map((row) => publicUser(userRecord(row)!))
  }

  async updatePasswordHash(id: number, passwordHash: string): Promise<void> {
    await this.#pool.query(`UPDATE ${this.#t.users} SET password_hash = $1 WHERE id = $2`, [
      passwordHash,
      id,
    ])
  }
}
