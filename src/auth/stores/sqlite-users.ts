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
import type { BusyGate } from './sqlite-busy.js'

/** @example new SqliteUserStore(prepare, tableNames(), new BusyGate()) */
export class SqliteUserStore implements UserStore {
  readonly #prepare: Prepare
  readonly #t: TableNames
  readonly #gate: BusyGate

  constructor(prepare: Prepare, tables: TableNames, gate: BusyGate) {
    this.#prepare = prepare
    this.#t = tables
    this.#gate = gate
  }

  // Each call runs in the gate whole, its statements prepared there too: preparing reads the
  // schema, which can meet a lock as well.
  async findByEmail(email: string): Promise<UserRecord | null> {
    return this.#gate.read(() => {
      const find = this.#prepare<[string], StoredRow>(
        `SELECT * FROM ${this.#t.users} WHERE email = ?`,
      )
      for (const key of emailLookupKeys(email)) {
        const row = find.get(key)
        if (row) return userRecord(row)
      }
      return null
    })
  }

  async findById(id: number): Promise<UserRecord | null> {
    if (!Number.isSafeInteger(id)) return null
    return this.#gate.read(() =>
      userRecord(
        this.#prepare<[number], StoredRow>(`SELECT * FROM ${this.#t.users} WHERE id = ?`).get(id),
      ),
    )
  }

  async create(user: NewUser): Promise<UserRecord> {
    const email = normalizeEmail(user.email)
    try {
      const row = await this.#gate.write(() =>
        this.#prepare<[string, string, string, string], StoredRow>(
          `INSERT INTO ${this.#t.users} (email, name, password_hash, roles) VALUES (?, ?, ?, ?) RETURNING *`,
        ).get(email, user.name, user.passwordHash, JSON.stringify(user.roles ?? [])),
      )
      return userRecord(row)!
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new DuplicateEmailError(email)
      throw error
    }
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<PublicUser[]> {
    const rows = await this.#gate.read(() =>
      this.#prepare<[number, number], StoredRow>(
        `SELECT * FROM ${this.#t.users} ORDER BY id LIMIT ? OFFSET ?`,
      ).all(options.limit ?? -1, options.offset ?? 0),
    )
    return rows.map((row) => publicUser(userRecord(row)!))
  }

  async updatePasswordHash(id: number, passwordHash: string): Promise<void> {
    await this.#gate.write(() =>
      this.#prepare(`UPDATE ${this.#t.users} SET password_hash = ? WHERE id = ?`).run(
        passwordHash,
        id,
      ),
    )
  }
}
