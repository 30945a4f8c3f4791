/**
 * The revocation list (spec "Authentication" 6): token ids (jti) blacklisted until the token's own
 * expiry. Keyed on the jti, never on the token string, so no other spelling of a revoked token
 * gets through. In memory by default; in Redis when REDIS_URL is set, shared by every process.
 */
import type { Redis } from 'ioredis'
import { within } from '../shared/within.js'
import { CLOCK_TOLERANCE } from './jwt.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

/**
 * @example
 * await revocations.revoke(payload.jti, payload.exp)
 * await revocations.isRevoked(payload.jti) // true until exp
 */
export interface RevocationList {
  /**
   * Blacklists `jti` until `expiresAt` (Unix seconds). Resolves true when this call revoked it,
   * false when it already was (an atomic test-and-set: of concurrent calls, one gets true).
   * `subject`, the token's `sub`, lets a bounded list give each user a share of its room.
   */
  revoke(jti: string, expiresAt: number, subject?: string): Promise<boolean>
  /**
   * Throws (or rejects) with RevocationListFullError when `revoke` would be refused for want of
   * room (a bounded list); asked by a durable list before it writes its database.
   */
  assertRoom?(jti: string, subject?: string): void | Promise<void>
  isRevoked(jti: string): Promise<boolean>
  close?(): Promise<void>
}

/** Case-folded so two spellings of one hex id share an entry; never more permissive. */
function keyOf(jti: string): string {
  return jti.toLowerCase()
}

export interface MemoryRevocationOptions {
  /** Unexpired entries kept at most (more revocations are refused). Default 100 000 (~10 MB). */
  maxEntries?: number | undefined
  /**
   * Unexpired entries of one subject (a user id, when the caller names it) kept at most; more of
   * its revocations are refused. Default a hundredth of maxEntries (1 000).
   */
  maxPerSubject?: number | undefined
  now?: (() => number) | undefined
}

export const MEMORY_REVOCATION_OPTIONS = optionNames<MemoryRevocationOptions>({
  maxEntries: 1,
  maxPerSubject: 1,
  now: 1,
})

/** A revocation that would not fit: callers answer 503, as for a store that is down. */
export class RevocationListFullError extends Error {
  /** The room that is full: the list's entries, or the subject's share. */
  readonly max: number
  /** The subject whose share is full; undefined when the whole list is. */
  readonly subject: string | undefined

  constructor(max: number, subject?: string) {
    super(
      subject === undefined
        ? `The in-memory revocation list holds ${max} unexpired tokens and takes no more; set REDIS_URL for a shared, larger one`
        : `The in-memory revocation list holds ${max} unexpired tokens of subject ${JSON.stringify(subject)}, its share, and takes no more of them until they expire`,
    )
    this.name = 'RevocationListFullError'
    this.max = max
    this.subject = subject
  }
}

interface Revoked {
  /** When the token expires (ms since the epoch); the entry goes then. */
  until: number
  subject: string | undefined
}

/**
 * An in-process TTL map. When full it drops expired entries; if none has expired, it refuses the
 * new one (RevocationListFullError) rather than forget a token that is still live: tokens of
 * different lifetimes share the list, so the oldest entry is not the next to expire, and a
 * forgotten entry would make a logged-out token work again.
 *
 * Each subject named by the caller gets a share (maxPerSubject): one account looping refresh or
 * login and logout revokes a token per request, and filled the whole list in minutes, after which
 * every user's logout and refresh answered 503 for as long as it kept going. Now only its own do.
 * @example
 * const revocations = new MemoryRevocationList({ maxEntries: 10_000 })
 */
export class MemoryRevocationList implements RevocationList {
  readonly #entries = new Map<string, Revoked>()
  /** The keys of each subject's entries. */
  readonly #bySubject = new Map<string, Set<string>>()
  readonly #max: number
  readonly #maxPerSubject: number
  readonly #now: () => number
  /** When a full list last looked for expired entries (a pass over all of them, so once a second). */
  #sweptAt = -Infinity

  constructor(options: MemoryRevocationOptions = {}) {
    checkOptions('new MemoryRevocationList()', options, MEMORY_REVOCATION_OPTIONS)
    this.#max = options.maxEntries ?? 100_000
    this.#maxPerSubject = options.maxPerSubject ?? Math.max(1, Math.floor(this.#max / 100))
    this.#now = options.now ?? Date.now
  }

  get size(): number {
    return this.#entries.size
  }

  async revoke(jti: string, expiresAt: number, subject?: string): Promise<boolean> {
    const until = expiresAt * 1000
    const now = this.#now()
    if (until <= now) return true
    // No await between the test and the set: concurrent calls cannot both see "not revoked".
    const key = keyOf(jti)
    if (this.#has(key)) return false
    this.#makeRoom(subject, now)
    this.#entries.set(key, { until, subject })
    if (subject !== undefined) {
      const own = this.#bySubject.get(subject)
      if (own === undefined) this.#bySubject.set(subject, new Set([key]))
      else own.add(key)
    }
    return true
  }

  /**
   * Throws RevocationListFullError unless `jti` is listed or would fit: asked before a durable
   * list writes its database, so that a revocation refused here is written nowhere (written there
   * only, it held after a restart while the token kept working until then).
   */
  assertRoom(jti: string, subject?: string): void {
    if (!this.#has(keyOf(jti))) this.#makeRoom(subject, this.#now())
  }

  /** Drops expired entries where needed; throws when the subject's share or the list is full. */
  #makeRoom(subject: string | undefined, now: number): void {
    const own = subject === undefined ? undefined : this.#bySubject.get(subject)
    if (own !== undefined && own.size >= this.#maxPerSubject) {
      for (const other of own) this.#has(other) // drops the expired ones
      if (own.size >= this.#maxPerSubject)
        throw new RevocationListFullError(this.#maxPerSubject, subject)
    }
    if (this.#entries.size >= this.#max && now - this.#sweptAt >= 1000) this.#dropExpired(now)
    if (this.#entries.size >= this.#max) throw new RevocationListFullError(this.#max)
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.#has(keyOf(jti))
  }

  #has(key: string): boolean {
    const entry = this.#entries.get(key)
    if (entry === undefined) return false
    if (entry.until > this.#now()) return true
    this.#delete(key, entry)
    return false
  }

  #delete(key: string, entry: Revoked): void {
    this.#entries.delete(key)
    if (entry.subject === undefined) return
    const own = this.#bySubject.get(entry.subject)
    own?.delete(key)
    if (own?.size === 0) this.#bySubject.delete(entry.subject)
  }

  #dropExpired(now: number): void {
    this.#sweptAt = now
    for (const [key, entry] of this.#entries) if (entry.until <= now) this.#delete(key, entry)
  }
}

export interface RedisRevocationOptions {
  /** Prefix of the keys. Default 'fw:revoked:'. */
  prefix?: string | undefined
  /**
   * A check or revocation slower than this fails (a 503), also on a connection made with
   * ioredis's defaults, which wait for ever on a Redis that stops answering. Default 1000 ms. A
   * connection that lost Redis (reconnecting, ended) fails each call at once, without waiting.
   */
  commandTimeoutMs?: number | undefined
  now?: (() => number) | undefined
}

const REDIS_REVOCATION_OPTIONS = optionNames<RedisRevocationOptions>({
  prefix: 1,
  commandTimeoutMs: 1,
  now: 1,
})

/**
 * Redis-backed: `SET <prefix><jti> 1 EX <seconds until exp, + CLOCK_TOLERANCE>`; shared by every
 * process and host.
 * @example
 * const revocations = new RedisRevocationList(new Redis(process.env.REDIS_URL!))
 */
export class RedisRevocationList implements RevocationList {
  readonly #redis: Redis
  /**
   * Whether the connection has been ready or has failed once: not ready since, Redis is away
   * (lost, or never reached), and waiting for it only delays the 503.
   */
  #tried: boolean
  readonly #prefix: string
  readonly #limitMs: number
  readonly #now: () => number

  constructor(redis: Redis, options: RedisRevocationOptions = {}) {
    checkOptions('new RedisRevocationList()', options, REDIS_REVOCATION_OPTIONS)
    this.#redis = redis
    this.#tried = redis.status === 'ready'
    if (!this.#tried) {
      const tried = (): void => {
        this.#tried = true
        redis.off('ready', tried).off('close', tried)
      }
      redis.on('ready', tried).on('close', tried)
    }
    this.#prefix = options.prefix ?? 'fw:revoked:'
    this.#limitMs = options.commandTimeoutMs ?? 1000
    this.#now = options.now ?? Date.now
  }

  async revoke(jti: string, expiresAt: number): Promise<boolean> {
    // Redis expires the key by its own clock, each host checks exp by its own: a host whose clock
    // ran behind Redis's took the token for live and no longer revoked once the key was gone.
    // Kept the tokens' clock tolerance longer, as much skew as a host may have. The same skew on
    // this side: a token this host sees expired may still be live on one whose clock lags.
    const ttl = Math.ceil(expiresAt - this.#now() / 1000) + CLOCK_TOLERANCE
    if (ttl <= 0) return true
    const key = this.#prefix + keyOf(jti)
    return (await this.#bounded(() => this.#redis.set(key, '1', 'EX', ttl, 'NX'))) === 'OK'
  }

  async isRevoked(jti: string): Promise<boolean> {
    return (await this.#bounded(() => this.#redis.exists(this.#prefix + keyOf(jti)))) === 1
  }

  async close(): Promise<void> {
    if (this.#redis.status !== 'ready') this.#redis.disconnect()
    // A Redis that stops answering fails QUIT too: the connection is closed all the same.
    else await this.#bounded(() => this.#redis.quit()).catch(() => this.#redis.disconnect())
  }

  /**
   * What `start` resolves to, or a rejection once it has taken longer than the time limit: a connection given with
   * ioredis's defaults (no command timeout) held every authenticated request while Redis was silent.
   */
  #bounded<T>(start: () => Promise<T>): Promise<T> {
    // A connection that lost Redis, or never reached it (and is trying again: reconnecting, then
    // connecting), fails at once, the callers answer 503: its commands waited their whole time
    // limit each, queued, and were all sent on reconnect; with Redis down from the start, each
    // waited out the retries, then the 1 s limit. One still making its first connection (a
    // first request at boot) waits for it, within the limit.
    const status = this.#redis.status
    if (status !== 'ready' && (this.#tried || status === 'end' || status === 'close'))
      return Promise.reject(new Error(`The Redis connection is ${status}`))
    return within(start(), this.#limitMs, `Redis did not answer within ${this.#limitMs} ms`)
  }
}

/**
 * A Redis list from a URL (lazy connection, one retry per command and a 1 s timeout, so an
 * outage or a Redis that stops answering fails fast).
 * @example
 * const revocations = await connectRedisRevocations(process.env.REDIS_URL!)
 */
export async function connectRedisRevocations(
  url: string,
  options: RedisRevocationOptions = {},
): Promise<RedisRevocationList> {
  // Before a connection exists to be left open.
  checkOptions('connectRedisRevocations()', options, REDIS_REVOCATION_OPTIONS)
  const { Redis } = await import('ioredis')
  // A Redis that stops answering fails each check within 1 s (503, as the cluster path does)
  // instead of holding every authenticated request: the timeout also runs while a command waits
  // in the offline queue for a connection.
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    commandTimeout: 1000,
    // ...and a connection that stops answering is dropped and made again, or every check would
    // time out on it for good after Redis is back.
    socketTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 2000),
  })
  // Commands reject while Redis is away (the middleware answers 503); don't also crash the process.
  redis.on('error', () => {})
  return new RedisRevocationList(redis, options)
}
