/**
 * Opaque refresh tokens (spec "Refresh-token record"): 32 random bytes as hex, given to the
 * client once; the store keeps only their SHA-256. Beyond the spec (OAuth 2.0 Security BCP):
 * each use rotates the token, and presenting a rotated one again revokes its whole family.
 */
import { createHash, randomBytes } from 'node:crypto'
import { formatDateTime, type RefreshTokenStore } from './stores/types.js'

/** 30 days. */
export const REFRESH_TOKEN_TTL = 2_592_000
const OPAQUE_TOKEN = /^[0-9a-f]{64}$/
/** How often (at most) a login deletes expired records: each rotation adds one, every 15 min. */
const PURGE_INTERVAL_MS = 3_600_000

/** SHA-256 hex of an opaque token: what the store keeps. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

export type RefreshOutcome =
  { status: 'rotated'; userId: number; refreshToken: string } | { status: 'reused' | 'invalid' }

/**
 * @example
 * const refresh = new RefreshTokens(db.refreshTokens)
 * const token = await refresh.issue(user.id)        // at login
 * const outcome = await refresh.rotate(token)       // at /rt/auth/refresh
 * await refresh.revoke(token, user.id)              // at /auth/logout
 */
export class RefreshTokens {
  readonly #store: RefreshTokenStore
  readonly #now: () => number
  readonly #ttl: number
  #purgedAt = -Infinity

  constructor(store: RefreshTokenStore, options: { now?: () => number; ttl?: number } = {}) {
    this.#store = store
    this.#now = options.now ?? Date.now
    this.#ttl = options.ttl ?? REFRESH_TOKEN_TTL
  }

  /** A new token starting a new family; expired records are deleted now and then. */
  async issue(userId: number): Promise<string> {
    await this.#purgeExpired()
    const token = randomBytes(32).toString('hex')
    const familyId = randomBytes(16).toString('hex')
    await this.#store.insert({
      userId,
      tokenHash: hashRefreshToken(token),
      familyId,
      expiresAt: this.#expiresAt(),
    })
    return token
  }

  /**
   * The id of the user a token was issued to, used or not (null for an unknown token): read
   * before `rotate` so that nothing is rotated when the user cannot be loaded.
   */
  async ownerOf(token: unknown): Promise<number | null> {
    if (typeof token !== 'string' || !OPAQUE_TOKEN.test(token)) return null
    return (await this.#store.find(hashRefreshToken(token)))?.user_id ?? null
  }

  /** Exchanges a token for its successor; anything but a current, unexpired token fails. */
  async rotate(token: unknown): Promise<RefreshOutcome> {
    if (typeof token !== 'string' || !OPAQUE_TOKEN.test(token)) return { status: 'invalid' }
    const next = randomBytes(32).toString('hex')
    const now = formatDateTime(this.#now())
    const result = await this.#store.rotate(
      hashRefreshToken(token),
      { tokenHash: hashRefreshToken(next), expiresAt: this.#expiresAt() },
      now,
    )
    if (result.status !== 'rotated') return { status: result.status }
    return { status: 'rotated', userId: result.userId, refreshToken: next }
  }

  /**
   * Ends the session `token` belongs to (at logout): its whole family is revoked, when `userId`
   * owns it. A record from before rotation has no family to tell its session apart, so then every
   * refresh token of the user is. Resolves false when nothing was revoked.
   */
  async revoke(token: unknown, userId: number): Promise<boolean> {
    if (typeof token !== 'string' || !OPAQUE_TOKEN.test(token)) return false
    const record = await this.#store.find(hashRefreshToken(token))
    if (record === null || record.user_id !== userId) return false
    const revoked =
      record.family_id === ''
        ? await this.#store.revokeUser(userId)
        : await this.#store.revokeFamily(record.family_id)
    return revoked > 0
  }

  /**
   * Nothing else deletes records: without this the table grows by a row per session every 15
   * minutes, forever. Expired ones are of no use, reuse detection included (an expired token is
   * refused anyway). A failure is left for the next time: it must not fail a login.
   */
  async #purgeExpired(): Promise<void> {
    const now = this.#now()
    if (now - this.#purgedAt < PURGE_INTERVAL_MS) return
    this.#purgedAt = now
    await this.#store.purgeExpired(formatDateTime(now)).catch(() => {})
  }

  #expiresAt(): string {
    return formatDateTime(this.#now() + this.#ttl * 1000)
  }
}
