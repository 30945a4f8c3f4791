/**
 * The refresh-token store on SQLite (see sqlite.ts for the database and the schema). Rotation runs
 * in an IMMEDIATE transaction, so concurrent refreshes (threads or processes) are serialised.
 */
import {
  accessMove,
  refreshTokenRecord,
  refreshTokenRow,
  type AccessMove,
  type AccessTokenRef,
  type NewRefreshToken,
  type NextRefreshToken,
  type RefreshTokenRecord,
  type RefreshTokenStore,
  type RotateResult,
  type StoredRow,
  type TableNames,
} from './types.js'
import type { Db, Prepare } from './sqlite-prepare.js'
import type { BusyGate } from './sqlite-busy.js'

/**
 * Each call runs in the gate whole (see BusyGate): a rotation that met a lock is run again as a
 * whole transaction, never applied in part.
 * @example new SqliteRefreshTokenStore(db, prepare, tableNames(), new BusyGate())
 */
export class SqliteRefreshTokenStore implements RefreshTokenStore {
  readonly #prepare: Prepare
  readonly #t: TableNames
  readonly #gate: BusyGate
  readonly #rotate: (tokenHash: string, next: NextRefreshToken, now: string) => RotateResult

  constructor(db: Db, prepare: Prepare, tables: TableNames, gate: BusyGate) {
    this.#prepare = prepare
    this.#t = tables
    this.#gate = gate
    const rotate = db.transaction((tokenHash: string, next: NextRefreshToken, now: string) =>
      this.#rotateNow(tokenHash, next, now),
    )
    this.#rotate = (...args) => rotate.immediate(...args)
  }

  async insert(record: NewRefreshToken): Promise<void> {
    await this.#gate.write(() => this.#insert(record))
  }

  async find(tokenHash: string): Promise<RefreshTokenRecord | null> {
    return this.#gate.read(() => this.#find(tokenHash))
  }

  async rotate(tokenHash: string, next: NextRefreshToken, now: string): Promise<RotateResult> {
    return this.#gate.write(() => this.#rotate(tokenHash, next, now))
  }

  async revokeFamily(familyId: string): Promise<number> {
    return this.#gate.write(
      () =>
        this.#prepare(
          `UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ? AND revoked = 0`,
        ).run(familyId).changes,
    )
  }

  async revokeUser(userId: number): Promise<number> {
    return this.#gate.write(
      () =>
        this.#prepare(
          `UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE user_id = ? AND revoked = 0`,
        ).run(userId).changes,
    )
  }

  async replaceAccess(previousJti: string, next: AccessTokenRef): Promise<AccessMove> {
    const rows = await this.#gate.write(() =>
      this.#prepare<[string, number, string], { revoked: number }>(
        `UPDATE ${this.#t.refreshTokens} SET access_jti = ?, access_expires_at = ? WHERE access_jti = ?
         RETURNING revoked`,
      ).all(next.jti, next.expiresAt, previousJti),
    )
    return accessMove(rows.map((r) => r.revoked !== 0))
  }

  async liveAccessTokens(
    by: 'family_id' | 'user_id',
    value: string | number,
    now: string,
  ): Promise<AccessTokenRef[]> {
    return this.#gate.read(() => this.#liveAccess(by, value, now))
  }

  async purgeExpired(now: string): Promise<number> {
    return this.#gate.write(
      () =>
        this.#prepare(`DELETE FROM ${this.#t.refreshTokens} WHERE expires_at <= ?`).run(now)
          .changes,
    )
  }

  #find(tokenHash: string): RefreshTokenRecord | null {
    return refreshTokenRecord(
      this.#prepare<[string], StoredRow>(
        `SELECT * FROM ${this.#t.refreshTokens} WHERE token = ?`,
      ).get(tokenHash),
    )
  }

  #liveAccess(by: 'family_id' | 'user_id', value: string | number, now: string): AccessTokenRef[] {
    return this.#prepare<[string | number, string], AccessTokenRef>(
      `SELECT access_jti AS jti, access_expires_at AS expiresAt FROM ${this.#t.refreshTokens}
         WHERE ${by === 'user_id' ? 'user_id' : 'family_id'} = ? AND access_jti IS NOT NULL
           AND access_expires_at > CAST(strftime('%s', ?) AS INTEGER) ORDER BY rowid`,
    ).all(value, now)
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
    const used = this.#find(tokenHash)
    if (used === null || used.rotated_at === null) return { status: 'invalid' }
    this.#prepare(`UPDATE ${this.#t.refreshTokens} SET revoked = 1 WHERE family_id = ?`).run(
      used.family_id,
    )
    // Read whether or not this call revoked the family: a theft answered 503 (the revocation list
    // was down) revokes its access tokens when the stolen token is presented again.
    const accessTokens = this.#liveAccess('family_id', used.family_id, now)
    return { status: 'reused', userId: used.user_id, familyId: used.family_id, accessTokens }
  }
}
