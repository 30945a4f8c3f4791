/**
 * The refresh-token store on PostgreSQL (see postgres.ts for the pool and the schema). Rotation is
 * one transaction that first locks the token's row (SELECT ... FOR UPDATE): of concurrent
 * refreshes with one token, one rotates and the others, queued on the lock, find it rotated.
 */
import type pg from 'pg'
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
  type TableNames,
} from './types.js'
import { transaction, type Query } from './postgres-transaction.js'

interface LockedToken {
  user_id: string
  family_id: string
  rotated: boolean
  revoked: boolean
  live: boolean
}

const TOKEN_COLUMNS = `user_id, token, to_char(expires_at, 'YYYY-MM-DD HH24:MI:SS') AS expires_at, family_id,
  to_char(rotated_at, 'YYYY-MM-DD HH24:MI:SS') AS rotated_at, revoked`

/** @example new PostgresRefreshTokenStore(pool, tableNames()) */
export class PostgresRefreshTokenStore implements RefreshTokenStore {
  readonly #pool: pg.Pool
  readonly #t: TableNames
  // The helpers below run on the pool here, and on the transaction's client in rotate().
  readonly #query: Query

  constructor(pool: pg.Pool, tables: TableNames) {
    this.#pool = pool
    this.#t = tables
    this.#query = (text, values) => pool.query(text, values)
  }

  async insert(record: NewRefreshToken): Promise<void> {
    await insertToken(this.#query, this.#t, record)
  }

  async find(tokenHash: string): Promise<RefreshTokenRecord | null> {
    const { rows } = await this.#pool.query(
      `SELECT ${TOKEN_COLUMNS} FROM ${this.#t.refreshTokens} WHERE token = $1`,
      [tokenHash],
    )
    return refreshTokenRecord(rows[0])
  }

  rotate(tokenHash: string, next: NextRefreshToken, now: string): Promise<RotateResult> {
    const t = this.#t
    return transaction(this.#pool, async (query) => {
      // Every exchange of one token queues on this row lock; the first sees it current.
      const { rows } = await query(
        `SELECT user_id, family_id, rotated_at IS NOT NULL AS rotated, revoked, expires_at > $2::timestamp AS live
         FROM ${t.refreshTokens} WHERE token = $1 FOR UPDATE`,
        [tokenHash, now],
      )
      const row = rows[0] as LockedToken | undefined
      if (row === undefined) return { status: 'invalid' }
      const userId = Number(row.user_id)
      if (row.rotated) {
        await revokeAll(query, t, 'family_id', row.family_id)
        // Read after the family is revoked, so a successor inserted meanwhile is in; and whether or
        // not this call revoked it: a theft answered 503 (the revocation list was down) revokes
        // its access tokens when the stolen token is presented again.
        const accessTokens = await liveAccess(query, t, 'family_id', row.family_id, now)
        return { status: 'reused', userId, familyId: row.family_id, accessTokens }
      }
      if (row.revoked || !row.live) return { status: 'invalid' }
      // A record from before rotation (no family) starts its own family, named after itself.
      const familyId = row.family_id === '' ? tokenHash : row.family_id
      await query(
        `UPDATE ${t.refreshTokens} SET rotated_at = $2::timestamp, family_id = $3 WHERE token = $1`,
        [tokenHash, now, familyId],
      )
      await insertToken(query, t, { ...next, userId, familyId })
      return { status: 'rotated', userId, familyId }
    })
  }

  revokeFamily(familyId: string): Promise<number> {
    return revokeAll(this.#query, this.#t, 'family_id', familyId)
  }

  revokeUser(userId: number): Promise<number> {
    return revokeAll(this.#query, this.#t, 'user_id', userId)
  }

  async replaceAccess(previousJti: string, next: AccessTokenRef): Promise<AccessMove> {
    // The UPDATE waits for a theft's or a logout's transaction holding the row: it reads the
    // revocation that transaction made, or that transaction reads `next` (no window between).
    const { rows } = await this.#pool.query(
      `UPDATE ${this.#t.refreshTokens} SET access_jti = $1, access_expires_at = $2 WHERE access_jti = $3
       RETURNING revoked`,
      [next.jti, next.expiresAt, previousJti],
    )
    return accessMove(rows.map((r: { revoked: boolean }) => r.revoked))
  }

  liveAccessTokens(
    by: 'family_id' | 'user_id',
    value: string | number,
    now: string,
  ): Promise<AccessTokenRef[]> {
    return liveAccess(this.#query, this.#t, by, value, now)
  }

  async purgeExpired(now: string): Promise<number> {
    const result = await this.#pool.query(
      `DELETE FROM ${this.#t.refreshTokens} WHERE expires_at <= $1::timestamp`,
      [now],
    )
    return result.rowCount ?? 0
  }
}

/**
 * Revokes every live token of a family (or a user), statement after statement until one finds
 * none. A single UPDATE is not enough: a rotation in progress holds the lock of the row it
 * exchanges, the UPDATE waits for it, and the successor it inserts is not in the UPDATE's
 * snapshot; it would stay live after a logout, or in a family revoked for theft. The next
 * statement sees it. Each round revokes a row, and a revoked row cannot be rotated: it ends.
 */
async function revokeAll(
  query: Query,
  t: TableNames,
  column: 'family_id' | 'user_id',
  value: string | number,
): Promise<number> {
  let total = 0
  for (;;) {
    const result = await query(
      `UPDATE ${t.refreshTokens} SET revoked = true WHERE ${column} = $1 AND NOT revoked`,
      [value],
    )
    if (!result.rowCount) return total
    total += result.rowCount
  }
}

/** The access tokens recorded with a family's (or a user's) refresh tokens that expire after `now`. */
async function liveAccess(
  query: Query,
  t: TableNames,
  column: 'family_id' | 'user_id',
  value: string | number,
  now: string,
): Promise<AccessTokenRef[]> {
  const live = await query(
    `SELECT access_jti, access_expires_at FROM ${t.refreshTokens}
     WHERE ${column === 'user_id' ? 'user_id' : 'family_id'} = $1 AND access_jti IS NOT NULL
       AND access_expires_at > extract(epoch FROM $2::timestamp)`,
    [value, now],
  )
  return live.rows.map((r: { access_jti: string; access_expires_at: string }): AccessTokenRef => ({
    jti: r.access_jti,
    expiresAt: Number(r.access_expires_at),
  }))
}

async function insertToken(query: Query, t: TableNames, record: NewRefreshToken): Promise<void> {
  await query(
    `INSERT INTO ${t.refreshTokens} (user_id, token, expires_at, family_id, access_jti, access_expires_at)
       VALUES ($1, $2, $3::timestamp, $4, $5, $6)`,
    refreshTokenRow(record),
  )
}
