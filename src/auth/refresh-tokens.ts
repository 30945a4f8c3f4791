/**
 * Opaque refresh tokens (spec "Refresh-token record"): 32 random bytes as hex, given to the
 * client once; the store keeps only their SHA-256. Beyond the spec (OAuth 2.0 Security BCP):
 * each use rotates the token, and presenting a rotated one again revokes its whole family. The
 * access token issued with each refresh token is recorded with it, so that a theft revokes the
 * family's access tokens still live too (`revokeAccessTokens`).
 */
import { createHash, randomBytes } from 'node:crypto'
import { formatDateTime, type AccessTokenRef, type RefreshTokenStore } from './stores/types.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

/** 30 days. */
export const REFRESH_TOKEN_TTL = 2_592_000
const OPAQUE_TOKEN = /^[0-9a-f]{64}$/
/** How often (at most) a login deletes expired records: each rotation adds one, every 15 min. */
const PURGE_INTERVAL_MS = 3_600_000

/** SHA-256 hex of an opaque token: what the store keeps. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** An access token as issued (TokenService.mint): recorded when it has a jti. */
export interface IssuedAccess {
  jti?: string
  exp: number
}

export type RefreshOutcome =
  { status: 'rotated'; userId: number; refreshToken: string } | { status: 'reused' | 'invalid' }

export interface RefreshTokensOptions {
  now?: () => number
  ttl?: number
  /**
   * Called on theft (a rotated token presented again) with the unexpired access tokens issued
   * with the family, before `rotate` resolves 'reused'; the recipe puts them on its revocation
   * list, under `userId`, the family's owner (a bounded list's share is per user). Unset: only
   * the family's refresh tokens are revoked.
   */
  revokeAccessTokens?: (tokens: AccessTokenRef[], userId: number) => Promise<void>
}

const REFRESH_TOKENS_OPTIONS = optionNames<RefreshTokensOptions>({
  now: 1,
  ttl: 1,
  revokeAccessTokens: 1,
})

/**
 * @example
 * const refresh = new RefreshTokens(db.refreshTokens)
 * const token = await refresh.issue(user.id, access)        // at login, with its access token
 * const outcome = await refresh.rotate(token, nextAccess)   // at /rt/auth/refresh
 * await refresh.revoke(token, user.id)              // at /auth/logout
 */
export class RefreshTokens {
  readonly #store: RefreshTokenStore
  readonly #now: () => number
  readonly #ttl: number
  readonly #revokeAccessTokens:
    ((tokens: AccessTokenRef[], userId: number) => Promise<void>) | undefined
  #purgedAt = -Infinity

  constructor(store: RefreshTokenStore, options: RefreshTokensOptions = {}) {
    // `revokeAccessToken` left a thief's access tokens live after the theft was seen.
    checkOptions('new RefreshTokens()', options, REFRESH_TOKENS_OPTIONS)
    this.#store = store
    this.#now = options.now ?? Date.now
    this.#ttl = options.ttl ?? REFRESH_TOKEN_TTL
    this.#revokeAccessTokens = options.revokeAccessTokens
  }

  /**
   * A new token starting a new family, recorded with `access`, the access token issued along;
   * expired records are deleted now and then.
   */
  async issue(userId: number, access?: IssuedAccess): Promise<string> {
    await this.#purgeExpired()
    const token = randomBytes(32).toString('hex')
    const familyId = randomBytes(16).toString('hex')
    await this.#store.insert({
      userId,
      tokenHash: hashRefreshToken(token),
      familyId,
      expiresAt: this.#expiresAt(),
      ...accessRef(access),
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

  /**
   * Exchanges a token for its successor, recorded with `access` (the access token to be issued
   * with it); anything but a current, unexpired token fails. A rejection of `revokeAccessTokens`
   * rejects this too (the refresh tokens are revoked already).
   */
  async rotate(token: unknown, access?: IssuedAccess): Promise<RefreshOutcome> {
    if (typeof token !== 'string' || !OPAQUE_TOKEN.test(token)) return { status: 'invalid' }
    const next = randomBytes(32).toString('hex')
    const now = formatDateTime(this.#now())
    const result = await this.#store.rotate(
      hashRefreshToken(token),
      { tokenHash: hashRefreshToken(next), expiresAt: this.#expiresAt(), ...accessRef(access) },
      now,
    )
    if (result.status === 'reused')
      await this.#revokeAccessTokens?.(result.accessTokens, result.userId)
    if (result.status !== 'rotated') return { status: result.status }
    return { status: 'rotated', userId: result.userId, refreshToken: next }
  }

  /**
   * Moves the link of the access token `previousJti` to `access`, which POST /auth/refresh
   * issues in its place: an access token of a family's session, exchanged there, would otherwise
   * escape the revocation of that family on theft (and could be exchanged again, every hour).
   * Resolves false when that family is revoked (then `access` must not be issued).
   */
  async replaceAccess(previousJti: string, access: IssuedAccess): Promise<boolean> {
    const ref = accessRef(access).access
    if (ref === undefined || this.#store.replaceAccess === undefined) return true
    return (await this.#store.replaceAccess(previousJti, ref)) !== 'revoked'
  }

  /**
   * Ends the session `token` belongs to (at logout): its whole family is revoked, when `userId`
   * owns it, its refresh tokens and (as on theft, `revokeAccessTokens`) the access tokens issued
   * with them that have not expired: one of those left live would be exchanged at POST
   * /auth/refresh, hour after hour, after the logout. A record from before rotation has no family
   * to tell its session apart, so then every refresh token of the user is. Resolves false when no
   * refresh token was revoked. `exceptJti`: the access token the logout came with, which the
   * caller revokes last; revoked here, a failure on a later one made the retry a 401.
   */
  async revoke(token: unknown, userId: number, exceptJti?: string): Promise<boolean> {
    if (typeof token !== 'string' || !OPAQUE_TOKEN.test(token)) return false
    const record = await this.#store.find(hashRefreshToken(token))
    if (record === null || record.user_id !== userId) return false
    const [by, value] =
      record.family_id === ''
        ? (['user_id', userId] as const)
        : (['family_id', record.family_id] as const)
    const revoked =
      by === 'user_id'
        ? await this.#store.revokeUser(userId)
        : await this.#store.revokeFamily(record.family_id)
    // Read after the refresh tokens are revoked, so a successor rotated meanwhile is in; and
    // whether or not this call revoked them, so a logout retried after a 503 revokes them too.
    const live = (
      (await this.#store.liveAccessTokens?.(by, value, formatDateTime(this.#now()))) ?? []
    ).filter((access) => access.jti !== exceptJti)
    if (live.length > 0) await this.#revokeAccessTokens?.(live, userId)
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

/** The record of an access token; one without a jti cannot be revoked, so none is kept. */
function accessRef(access: IssuedAccess | undefined): { access?: AccessTokenRef } {
  return typeof access?.jti === 'string'
    ? { access: { jti: access.jti, expiresAt: access.exp } }
    : {}
}
