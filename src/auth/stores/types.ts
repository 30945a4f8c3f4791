/**
 * The user and refresh-token stores (spec "Login user object", "Refresh-token record"). Two
 * implementations share these contracts: SQLite (embedded default) and PostgreSQL.
 */

/** A user as clients see it. */
export interface PublicUser {
  id: number
  email: string
  name: string
  roles: string[]
}

/** A stored user. `password_hash` never leaves the server; see `publicUser`. */
export interface UserRecord extends PublicUser {
  password_hash: string
}

export interface NewUser {
  email: string
  name: string
  passwordHash: string
  roles?: readonly string[]
}

/**
 * @example
 * const user = await users.findByEmail('ada@example.com')
 */
export interface UserStore {
  /** Emails are compared case-insensitively (stored lowercased). */
  findByEmail(email: string): Promise<UserRecord | null>
  findById(id: number): Promise<UserRecord | null>
  /** Throws DuplicateEmailError when the email is taken. */
  create(user: NewUser): Promise<UserRecord>
  /** Users in id order, without password hashes. */
  list(options?: { limit?: number; offset?: number }): Promise<PublicUser[]>
  updatePasswordHash(id: number, passwordHash: string): Promise<void>
}

/** A stored refresh token. `token` is the SHA-256 hex of the opaque token; times are UTC. */
export interface RefreshTokenRecord {
  user_id: number
  token: string
  /** 'Y-m-d H:i:s', UTC. */
  expires_at: string
  /** Tokens that descend from one login by rotation share a family. */
  family_id: string
  /** When the token was exchanged for its successor, or null while it is current. */
  rotated_at: string | null
  revoked: boolean
}

/**
 * The access token issued along with a refresh token: kept with it so that theft of the family
 * revokes the access tokens it minted too, not only its refresh tokens.
 */
export interface AccessTokenRef {
  jti: string
  /** Unix seconds. */
  expiresAt: number
}

/** What `RefreshTokenStore.replaceAccess` found. */
export type AccessMove = 'moved' | 'revoked' | 'none'

export interface NewRefreshToken {
  userId: number
  tokenHash: string
  familyId: string
  /** 'Y-m-d H:i:s', UTC. */
  expiresAt: string
  access?: AccessTokenRef
}

/** The successor a rotation stores. */
export interface NextRefreshToken {
  tokenHash: string
  /** 'Y-m-d H:i:s', UTC. */
  expiresAt: string
  access?: AccessTokenRef
}

/**
 * What exchanging a refresh token did. On reuse, `accessTokens` are those recorded with the
 * family's tokens that expire after `now`.
 */
export type RotateResult =
  | { status: 'rotated'; userId: number; familyId: string }
  | { status: 'reused'; userId: number; familyId: string; accessTokens: AccessTokenRef[] }
  | { status: 'invalid' }

/**
 * @example
 * const result = await refreshTokens.rotate(sha256(old), { tokenHash: sha256(next), expiresAt }, now)
 */
export interface RefreshTokenStore {
  insert(record: NewRefreshToken): Promise<void>
  find(tokenHash: string): Promise<RefreshTokenRecord | null>
  /**
   * Atomically marks the current, unexpired, unrevoked token `tokenHash` as rotated and stores its
   * successor in the same family. At most one of any number of concurrent calls for one token
   * rotates; the others see a rotated token ('reused', and the family is revoked) or 'invalid'.
   */
  rotate(tokenHash: string, next: NextRefreshToken, now: string): Promise<RotateResult>
  /** Revokes every token of a family; returns how many were still active. */
  revokeFamily(familyId: string): Promise<number>
  revokeUser(userId: number): Promise<number>
  /**
   * Records `next` in place of the access token `previousJti` wherever a refresh token holds it
   * (POST /auth/refresh exchanged one for the other), so a theft of that family revokes `next`
   * too. Resolves 'revoked' when that refresh token's family is revoked (a theft or a logout
   * ended the session: `next` must not be issued), 'moved', or 'none' when no refresh token holds
   * `previousJti`. A store without it leaves such tokens unlinked.
   */
  replaceAccess?(previousJti: string, next: AccessTokenRef): Promise<AccessMove>
  /**
   * The access tokens recorded with the tokens of a family (or of every family of a user) that
   * expire after `now`: a logout that ends the session revokes them as a theft does. A store
   * without it leaves them live until they expire.
   */
  liveAccessTokens?(
    by: 'family_id' | 'user_id',
    value: string | number,
    now: string,
  ): Promise<AccessTokenRef[]>
  /** Deletes records that expired before `now`; returns how many. */
  purgeExpired(now: string): Promise<number>
}

/**
 * Revoked token ids (jti) kept until the token's expiry, so a revocation outlives a restart.
 * @example
 * if (await revokedTokens.insert(jti, payload.exp)) console.log('revoked now')
 */
export interface RevokedTokenStore {
  /** Stores `jti` until `expiresAt` (Unix seconds); resolves false when it was stored already. */
  insert(jti: string, expiresAt: number): Promise<boolean>
  /** The entries that expire after `now` (Unix seconds). */
  live(now: number): Promise<Array<{ jti: string; expiresAt: number }>>
  /** Deletes the entries that expired at or before `now`; returns how many. */
  purgeExpired(now: number): Promise<number>
  /** Deletes the entry of `jti` (a revocation the in-memory list then refused). */
  remove?(jti: string): Promise<void>
}

/** The users and refresh tokens of one database. */
export interface Database {
  readonly kind: 'sqlite' | 'postgres'
  readonly users: UserStore
  readonly refreshTokens: RefreshTokenStore
  /** Revoked access tokens. A database without it keeps revocations in memory only. */
  readonly revokedTokens?: RevokedTokenStore
  close(): Promise<void>
}

/** Thrown by `UserStore.create` when the email is taken. */
export class DuplicateEmailError extends Error {
  readonly email: string
  constructor(email: string) {
    super(`A user with the email ${email} already exists`)
    this.name = 'DuplicateEmailError'
    this.email = email
  }
}

/**
 * The stored form of an email: trimmed, lowercased and NFC-normalised, so "josé" typed composed
 * (U+00E9) or decomposed ("e" + U+0301) is one address, and one account.
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase().normalize('NFC')
}

/**
 * The stored forms to look an email up by: the normal one first, then those fw may have stored
 * before emails were NFC-normalised (trimmed and lowercased only): as typed, or decomposed (NFD,
 * what macOS and some keyboards send).
 */
export function emailLookupKeys(email: string): string[] {
  const legacy = email.trim().toLowerCase()
  return [...new Set([normalizeEmail(email), legacy, legacy.normalize('NFD')])]
}

/** What replaceAccess found, from the revoked flag of each record it moved. */
export function accessMove(revoked: readonly boolean[]): AccessMove {
  return revoked.length === 0 ? 'none' : revoked.includes(true) ? 'revoked' : 'moved'
}

/** The values of a refresh token's INSERT, in column order (user_id, token, expires_at, family_id, access_jti, access_expires_at). */
export function refreshTokenRow(
  record: NewRefreshToken,
): [number, string, string, string, string | null, number | null] {
  const { userId, tokenHash, expiresAt, familyId, access } = record
  return [userId, tokenHash, expiresAt, familyId, access?.jti ?? null, access?.expiresAt ?? null]
}

/** `Y-m-d H:i:s` in UTC (spec "Refresh-token record"). */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/** Strips `password_hash`. */
export function publicUser(user: UserRecord): PublicUser {
  return { id: user.id, email: user.email, name: user.name, roles: [...user.roles] }
}

/** The tables of one database (see `tableNames`). */
export interface TableNames {
  users: string
  refreshTokens: string
  revokedTokens: string
}

/** Table names from an optional prefix (letters, digits, underscores). */
export function tableNames(prefix = ''): TableNames {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$|^$/.test(prefix))
    throw new TypeError(`Invalid table prefix "${prefix}"`)
  return {
    users: `${prefix}users`,
    refreshTokens: `${prefix}refresh_tokens`,
    revokedTokens: `${prefix}revoked_tokens`,
  }
}

/** Roles as stored (a JSON array of strings), read defensively. */
export function parseRoles(stored: unknown): string[] {
  if (Array.isArray(stored)) return stored.filter((r): r is string => typeof r === 'string')
  if (typeof stored !== 'string' || stored === '') return []
  try {
    return parseRoles(JSON.parse(stored) as unknown)
  } catch {
    return []
  }
}

/** A row as a driver answers it: column name to value. */
export type StoredRow = Record<string, unknown>

/**
 * A users row of either store as a record: PostgreSQL answers a BIGINT id as a string and roles
 * as parsed JSONB, SQLite a number and JSON text.
 * @example
 * const user = userRecord(rows[0])
 */
export function userRecord(row: StoredRow | undefined): UserRecord | null {
  if (!row) return null
  return {
    id: Number(row.id),
    email: String(row.email),
    // NULL only in a table made by hand: '' ('null' was sent to clients and signed into tokens).
    name: row.name === null ? '' : String(row.name),
    roles: parseRoles(row.roles),
    password_hash: String(row.password_hash),
  }
}

/**
 * A refresh_tokens row of either store as a record: PostgreSQL answers a BIGINT user id as a
 * string and `revoked` as a boolean, SQLite a number and an integer (0 or 1).
 * @example
 * const record = refreshTokenRecord(rows[0])
 */
export function refreshTokenRecord(row: StoredRow | undefined): RefreshTokenRecord | null {
  if (!row) return null
  return {
    user_id: Number(row.user_id),
    token: String(row.token),
    expires_at: String(row.expires_at),
    family_id: row.family_id === null ? '' : String(row.family_id),
    rotated_at: row.rotated_at === null ? null : String(row.rotated_at),
    // A NULL flag (a nullable column made by hand) counts as revoked: a security flag fails closed.
    revoked: typeof row.revoked === 'number' ? row.revoked !== 0 : row.revoked !== false,
  }
}
