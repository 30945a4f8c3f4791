/**
 * The throttle algorithm: a sliding window log.
 *
 * Each counter keeps the times of the requests it admitted during the last window. A request is
 * admitted when fewer than `max` admissions are younger than `window`; a refused request is not
 * recorded (hammering a limited endpoint does not extend the wait). Each admission frees its slot
 * exactly `window` after it happened, so capacity comes back as the window advances.
 *
 * Why not a token bucket or GCRA: they refill at max/window per second, so with `throttle:5,60`
 * requests at 0s, 15s, 30s, 45s and 50s leave room for a sixth at 55s (GCRA lets ~9 through in
 * a minute when spread out). The spec says requests 1–5 *within the window* succeed and the 6th
 * gets 429; only a log keeps "at most `max` in any `window`" exact for every arrival pattern. The
 * price is memory proportional to `max` per active key (8 bytes a slot; 480 B for 60/min), which
 * the stores bound by key count and expiry. The Redis store runs the same algorithm in Lua.
 *
 * Times are milliseconds from an injected clock so tests never sleep.
 */
import { throttle as throttleParams } from '../shared/middleware-aliases.js'

/** Milliseconds since the Unix epoch. */
export type Clock = () => number

/**
 * The Unix time in milliseconds, as it was when the process started plus the time elapsed since
 * on the monotonic clock: a wall clock stepped back (NTP, a VM restored) does not move it. With
 * Date.now(), a step back of an hour refused every client that had used its window, for that hour.
 */
export const systemClock: Clock = () => performance.timeOrigin + performance.now()

/** `throttle:<max>,<seconds>`: at most `max` requests in any `windowMs`. */
export interface ThrottleRule {
  readonly max: number
  readonly windowMs: number
}

/** What a check decided, with everything the headers need. */
export interface ThrottleDecision {
  allowed: boolean
  /** The rule's `max`. */
  limit: number
  /** Requests still allowed in the current window after this one (0 on deny). */
  remaining: number
  /** Unix second of the reset instant: `floor(now)` + `resetAfterSeconds` (X-RateLimit-Reset). */
  resetSeconds: number
  /**
   * Seconds from now (rounded up, at least 1) until the reset: on a refusal, when the next slot
   * frees; when allowed, when every slot is free again (RateLimit-Reset).
   */
  resetAfterSeconds: number
  /** Seconds until a retry can succeed: `resetAfterSeconds` on deny, 0 when allowed. */
  retryAfterSeconds: number
  /** The admission's timestamp, to give the slot back (see `ThrottleStore.release`). */
  stamp: number
}

/** Defaults when the alias has no numbers (DESIGN.md: 60 requests per 60 seconds). */
export const DEFAULT_RULE: ThrottleRule = { max: 60, windowMs: 60_000 }

/**
 * The rule of an alias's parameters: `['5', '60']` → 5 per 60 s; `['5']` → 5 per 60 s (the
 * default window, as Laravel's `throttle:5`); `[]` → the default.
 * The compiler already rejects malformed aliases; this re-checks for hand-built kernels.
 * @example
 * parseRule(['5', '60']) // { max: 5, windowMs: 60000 }
 */
export function parseRule(params: readonly string[]): ThrottleRule {
  if (params.length === 0) return DEFAULT_RULE
  const problem = throttleParams(params.join(','))
  if (problem !== null) throw new TypeError(`throttle:${params.join(',')} ${problem}`)
  const [max, seconds = DEFAULT_RULE.windowMs / 1000] = params.map(Number)
  return { max: max!, windowMs: seconds * 1000 }
}

/**
 * The admissions of one counter (one key), oldest first. `#head` skips expired entries without shifting;
 * the array is compacted once the dead prefix outweighs the live part, so it stays under 2×max.
 */
export class SlidingWindowLog {
  #stamps: number[] = []
  #head = 0

  /**
   * Checks and (when allowed) records one request at `now`. Synchronous: a store that calls it
   * without awaiting in between is atomic per key.
   * @example
   * const log = new SlidingWindowLog()
   * log.take(Date.now(), { max: 5, windowMs: 60_000 }).allowed // true
   */
  take(now: number, rule: ThrottleRule): ThrottleDecision {
    this.#expire(now - rule.windowMs)
    const stamps = this.#stamps
    // A clock that steps back must not unsort the log: count such a request at the newest time.
    const at = stamps.length > this.#head ? Math.max(now, stamps[stamps.length - 1]!) : now
    const used = stamps.length - this.#head
    if (used >= rule.max) {
      const oldest = stamps[stamps.length - rule.max]!
      return decide(false, rule, now, oldest, stamps[stamps.length - 1]!, 0, 0)
    }
    stamps.push(at)
    return decide(true, rule, now, at, at, rule.max - used - 1, at)
  }

  /**
   * The refusal a check at `now` would get, or null when it would pass; records nothing (a 429
   * of a stacked limit asks the other limits how long they keep the request out).
   */
  peek(now: number, rule: ThrottleRule): ThrottleDecision | null {
    this.#expire(now - rule.windowMs)
    const stamps = this.#stamps
    if (stamps.length - this.#head < rule.max) return null
    return decide(false, rule, now, stamps[stamps.length - rule.max]!, now, 0, 0)
  }

  /** Gives back one admission (a later layer refused the request). */
  release(stamp: number): boolean {
    const stamps = this.#stamps
    for (let i = stamps.length - 1; i >= this.#head; i--) {
      if (stamps[i] === stamp) {
        stamps.splice(i, 1)
        return true
      }
    }
    return false
  }

  /** When the newest admission leaves the window (the log is empty from then on). */
  expiresAt(windowMs: number): number {
    const stamps = this.#stamps
    return stamps.length > this.#head ? stamps[stamps.length - 1]! + windowMs : 0
  }

  /** Live admissions at `now`. */
  count(now: number, windowMs: number): number {
    this.#expire(now - windowMs)
    return this.#stamps.length - this.#head
  }

  #expire(cutoff: number): void {
    const stamps = this.#stamps
    while (this.#head < stamps.length && stamps[this.#head]! <= cutoff) this.#head++
    if (this.#head === stamps.length) {
      stamps.length = 0
      this.#head = 0
    } else if (this.#head > 16 && this.#head * 2 > stamps.length) {
      this.#stamps = stamps.slice(this.#head)
      this.#head = 0
    }
  }
}

/**
 * Builds a decision from the log's numbers; shared by every store so headers agree.
 * `oldest` is the admission whose expiry frees the next slot, `newest` the latest admission.
 * @example
 * decide(false, { max: 5, windowMs: 60_000 }, now, now - 30_000, now - 1_000, 0, 0).retryAfterSeconds // 30
 */
export function decide(
  allowed: boolean,
  rule: ThrottleRule,
  now: number,
  oldest: number,
  newest: number,
  remaining: number,
  stamp: number,
): ThrottleDecision {
  // A 429's three headers must name one instant, and the only useful one is when a retry
  // succeeds (the oldest admission leaving), not when the whole log drains. The Unix second is
  // derived from the relative count, not rounded on its own: ceil(reset) and ceil(reset - now)
  // round different fractions and drifted a second apart whenever `now` was not on a second.
  const resetAt = (allowed ? newest : oldest) + rule.windowMs
  const after = Math.max(1, Math.ceil((resetAt - now) / 1000))
  return {
    allowed,
    limit: rule.max,
    remaining,
    resetSeconds: Math.floor(now / 1000) + after,
    resetAfterSeconds: after,
    retryAfterSeconds: allowed ? 0 : after,
    stamp,
  }
}
