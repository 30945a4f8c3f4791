/**
 * In-process counters: the default store, and the one the cluster primary serves to workers.
 *
 * Bounded: at most `maxKeys` counters, least recently used evicted first, except that a counter
 * refusing its client right now is passed over (see LIMITED_SPARED); expired counters are
 * swept lazily (a couple per check, from the least recently used end), so no timer runs and
 * nothing keeps the process alive. Memory is about maxKeys × (100 B + 8 B per live admission).
 * Atomic per key: a check reads and writes its log synchronously, with no await in between, and
 * JavaScript runs one check at a time.
 *
 * Recency is a doubly linked list beside the Map rather than Map re-insertion: deleting and
 * re-adding a Map key on every hit leaves holes that make iteration (the sweep) O(holes), which
 * measured 7 µs per check with 5 000 clients instead of 0.2 µs.
 */
import {
  SlidingWindowLog,
  systemClock,
  type Clock,
  type ThrottleDecision,
  type ThrottleRule,
} from './limiter.js'
import type { ThrottleStore } from './store.js'

export interface MemoryStoreOptions {
  /** Counters kept at most; the least recently used goes first. Default 50 000. */
  maxKeys?: number
  /** Milliseconds since the epoch; inject one in tests. */
  clock?: Clock
}

interface Counter {
  key: string
  log: SlidingWindowLog
  windowMs: number
  /** The rule's max at the last check: with `log`, whether the client is being refused. */
  max: number
  newer: Counter | null
  older: Counter | null
}

/** Counters looked at per check by the lazy sweep; 2 keeps the sweep ahead of key creation. */
const SWEEP_PER_CHECK = 2

/**
 * How many refusing counters one eviction passes over (moving each to the recent end) before it
 * takes the least recently used anyway. Without it, new keys evict in plain LRU order, and one
 * IPv6 /48 (65,536 /64 buckets) could flush an exhausted client's counter, login throttle
 * included, to get a fresh budget; now it must exhaust every counter it wants gone first.
 */
const LIMITED_SPARED = 8

/**
 * @example
 * const store = new MemoryStore({ maxKeys: 10_000 })
 * store.hit('ip:203.0.113.9', { max: 5, windowMs: 60_000 }).allowed // true
 */
export class MemoryStore implements ThrottleStore {
  readonly #counters = new Map<string, Counter>()
  readonly #maxKeys: number
  readonly #clock: Clock
  #newest: Counter | null = null
  #oldest: Counter | null = null

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxKeys = Math.max(1, options.maxKeys ?? 50_000)
    this.#clock = options.clock ?? systemClock
  }

  /** Counters currently held. */
  get size(): number {
    return this.#counters.size
  }

  // Hot path: one Map lookup, a few pointer moves, one log update.
  hit(key: string, rule: ThrottleRule): ThrottleDecision {
    const now = this.#clock()
    let counter = this.#counters.get(key)
    if (counter === undefined) {
      counter = {
        key,
        log: new SlidingWindowLog(),
        windowMs: rule.windowMs,
        max: rule.max,
        newer: null,
        older: null,
      }
      this.#counters.set(key, counter)
      this.#pushNewest(counter)
    } else if (counter !== this.#newest) {
      this.#unlink(counter)
      this.#pushNewest(counter)
    }
    counter.max = rule.max
    const decision = counter.log.take(now, rule)
    this.#sweep(now)
    return decision
  }

  release(key: string, _rule: ThrottleRule, stamp: number): void {
    this.#counters.get(key)?.log.release(stamp)
  }

  /** Drops every expired counter now (the lazy sweep does this a few at a time). */
  prune(): void {
    const now = this.#clock()
    for (const counter of this.#counters.values()) {
      if (counter.log.expiresAt(counter.windowMs) <= now) this.#remove(counter)
    }
  }

  close(): void {
    this.#counters.clear()
    this.#newest = this.#oldest = null
  }

  /** Drops the least recently used counters while over capacity, and up to 2 expired ones. */
  #sweep(now: number): void {
    let budget = SWEEP_PER_CHECK
    for (let oldest = this.#oldest; oldest !== null; oldest = this.#oldest) {
      if (this.#counters.size > this.#maxKeys) {
        this.#evict(now)
        continue
      }
      if (budget-- <= 0 || oldest.log.expiresAt(oldest.windowMs) > now) return
      this.#remove(oldest)
    }
  }

  /** Evicts the least recently used counter that is not refusing its client (see LIMITED_SPARED). */
  #evict(now: number): void {
    let candidate = this.#oldest!
    for (let spared = 0; spared < LIMITED_SPARED && candidate !== this.#newest; spared++) {
      if (candidate.log.count(now, candidate.windowMs) < candidate.max) break
      this.#unlink(candidate)
      this.#pushNewest(candidate)
      candidate = this.#oldest!
    }
    this.#remove(candidate)
  }

  #remove(counter: Counter): void {
    this.#unlink(counter)
    this.#counters.delete(counter.key)
  }

  #pushNewest(counter: Counter): void {
    counter.older = this.#newest
    counter.newer = null
    if (this.#newest) this.#newest.newer = counter
    this.#newest = counter
    this.#oldest ??= counter
  }

  #unlink(counter: Counter): void {
    if (counter.newer) counter.newer.older = counter.older
    else this.#newest = counter.older
    if (counter.older) counter.older.newer = counter.newer
    else this.#oldest = counter.newer
    counter.newer = counter.older = null
  }
}
