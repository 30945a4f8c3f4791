/**
 * The in-process revocation list (memory, or the primary's under `--workers`) made to outlive a
 * restart: every revocation is also written to the user database, and a process reads back the
 * unexpired ones before it answers its first check. Without this a restart (a deploy, a crash)
 * forgot every logout: a logged-out token verified again until its exp, and a token refreshed
 * before the restart refreshed once more after it. Checks stay in memory (no query per
 * authenticated request); only revocations (logout, refresh) write. On a database shared by
 * several hosts the write is also a test-and-set, so a token refreshes once on all of them.
 */
import { RevocationListFullError, type RevocationList } from './revocation.js'
import type { RevokedTokenStore } from './stores/types.js'

/** How often (at most) a revocation deletes the expired rows. */
const PURGE_INTERVAL_MS = 3_600_000

export interface DurableRevocationOptions {
  /** The list checked first and written first (memory, or the primary's over IPC). */
  inner: RevocationList
  /** The table; undefined when the database has none (then this is the inner list alone). */
  store: () => Promise<RevokedTokenStore | undefined>
  now?: () => number
}

/**
 * @example
 * const list = new DurableRevocationList({ inner: new MemoryRevocationList(), store: async () => (await db()).revokedTokens })
 */
export class DurableRevocationList implements RevocationList {
  readonly #inner: RevocationList
  readonly #store: () => Promise<RevokedTokenStore | undefined>
  readonly #now: () => number
  /** Revocations of earlier runs (key: lowercased jti, as the lists key it; value: exp, seconds). */
  #earlier: Promise<Map<string, number>> | null = null
  /** The same, once read: a check then awaits nothing more than the inner list does. */
  #read: Map<string, number> | null = null
  #purgedAt = -Infinity

  constructor(options: DurableRevocationOptions) {
    this.#inner = options.inner
    this.#store = options.store
    this.#now = options.now ?? Date.now
  }

  async revoke(jti: string, expiresAt: number, subject?: string): Promise<boolean> {
    if (this.#isEarlier(await this.#loadEarlier(), jti)) return false
    const store = await this.#store()
    if (store === undefined || expiresAt * 1000 <= this.#now())
      return this.#inner.revoke(jti, expiresAt, subject)
    // The database first, and its insert is the test-and-set: a write that fails (a 503) leaves
    // the token as it was, so the client's retry revokes it for good. Revoked in memory first, it
    // was refused at once (the retried logout a 401, the retried refresh a 400) but never written,
    // and a restart brought it back.
    await this.#purge(store)
    // Room first: refused by the list after the insert, the revocation held only after a restart.
    await this.#inner.assertRoom?.(jti, subject)
    const revoked = await store.insert(jti.toLowerCase(), expiresAt)
    try {
      await this.#inner.revoke(jti, expiresAt, subject)
    } catch (error) {
      // Refused by the list after all (a concurrent revocation took the room first): the row is
      // taken back, so that the revocation is nowhere, and the retry of the 503 can make it.
      if (revoked && error instanceof RevocationListFullError)
        await store.remove?.(jti.toLowerCase()).catch(() => {})
      throw error
    }
    return revoked
  }

  isRevoked(jti: string): Promise<boolean> {
    // Every authenticated request checks: once the earlier revocations are read, no await.
    if (this.#read !== null)
      return this.#isEarlier(this.#read, jti) ? Promise.resolve(true) : this.#inner.isRevoked(jti)
    return this.#loadEarlier().then((earlier) =>
      this.#isEarlier(earlier, jti) ? true : this.#inner.isRevoked(jti),
    )
  }

  async close(): Promise<void> {
    await this.#inner.close?.()
  }

  #isEarlier(earlier: Map<string, number>, jti: string): boolean {
    const exp = earlier.get(jti.toLowerCase())
    return exp !== undefined && exp * 1000 > this.#now()
  }

  /** Read once; a failure is forgotten, so the next call tries again (and answers 503 meanwhile). */
  #loadEarlier(): Promise<Map<string, number>> {
    this.#earlier ??= this.#readEarlier().catch((error: unknown) => {
      this.#earlier = null
      throw error
    })
    return this.#earlier
  }

  async #readEarlier(): Promise<Map<string, number>> {
    const store = await this.#store()
    const rows = store === undefined ? [] : await store.live(Math.floor(this.#now() / 1000))
    return (this.#read = new Map(rows.map((row) => [row.jti.toLowerCase(), row.expiresAt])))
  }

  /** A failure is left for the next time: it must not fail a logout. */
  async #purge(store: RevokedTokenStore): Promise<void> {
    const now = this.#now()
    if (now - this.#purgedAt < PURGE_INTERVAL_MS) return
    this.#purgedAt = now
    await store.purgeExpired(Math.floor(now / 1000)).catch(() => {})
  }
}
