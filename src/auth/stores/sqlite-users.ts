/** The user store on SQLite (see sqlite.ts for the database and the schema). */
import {
  DuplicateEmailError,
  emailLookupKeys,
  normalizeEmail,
  publicUser,
  userRecord,
  type NewUser,
  type PublicUser,
  type StoredRow,
  type TableNames,
  type UserRecord,
  type UserStore,
} from './types.js'
import type { Prepare } from './sqlite-prepare.js'

/** @example new SqliteUserStore(prepare, tableNames()) */
export class SqliteUserStore implements UserStore {
  readonly #prepare: Prepare
  readonly #t: TableNames

  constructor(prepare: Prepare, tables: TableNames) {
    this.#prepare = prepare
    this.#t = tables
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const find = this.#prepare<[string], StoredRow>(
      `SELECT * FROM ${this.#t.users} WHERE email = ?`,
    )
    for (const key of emailLookupKeys(email)) {
      const row = find.get(key)
      if (row) return userRecord(row)
    }
    return null
  }

  async findById(id: number): Promise<UserRecord | null> {
    if (!Number.isSafeInteger(id)) return null
    return userRecord(
      this.#prepare<[number], StoredRow>(`SELECT * FROM ${this.#t.users} WHERE id = ?`).get(id),
    )
  }

  async create(user: NewUser): Promise<UserRecord> {
    const email = normalizeEmail(user.email)
    try {
      const row = this.#prepare<[string, string, string, string], StoredRow>(
        `INSERT INTO ${this.#t.users} (email, name, password_hash, roles) VALUES (?, ?, ?, ?) RETURNING *`,
      ).get(email, user.name, user.passwordHash, JSON.stringify(user.roles ?? []))
      return userRecord(row)!
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new DuplicateEmailError(email)
      throw error
    }
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<PublicUser[]> {
    const rows = this.#prepare<[number, number], StoredRow>(
      `SELECT * FROM ${this.#t.users} ORDER BY id LIMIT ? OFFSET ?`,
    ).all(options.limit ?? -1, options.offset ?? 0)
    return rows.map((row) => publicUser(userRecord(row)!))
  }

  async updatePasswordHash(id: number, passwordHash: string): Promise<void> {
    this.#prepare(`UPDATE ${this.#t.users} SET password_hash = ? WHERE id = ?`).run(
      passwordHash,
      id,
    )
  }
}
