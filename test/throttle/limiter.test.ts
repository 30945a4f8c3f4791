/**
 * The sliding window log with an injected clock: requests 1–5 of `throttle:5,60` pass, the 6th
 * is refused, and each slot comes back exactly one window after it was used. No sleeping.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_RULE, SlidingWindowLog, parseRule } from '../../src/throttle/limiter.js'

const T0 = 1_700_000_000_000 // a fixed epoch in ms
const FIVE_PER_MINUTE = { max: 5, windowMs: 60_000 }

describe('SlidingWindowLog (throttle:5,60)', () => {
  it('admits requests 1–5 within the window and refuses the 6th', () => {
    const log = new SlidingWindowLog()
    const results = [0, 1, 2, 3, 4, 5].map((i) => log.take(T0 + i * 1000, FIVE_PER_MINUTE))
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false])
    expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0])
  })

  it('counts requests spread over the window too (a refill bucket would let the 6th through)', () => {
    const log = new SlidingWindowLog()
    for (const s of [0, 15, 30, 45, 50])
      expect(log.take(T0 + s * 1000, FIVE_PER_MINUTE).allowed).toBe(true)
    expect(log.take(T0 + 55_000, FIVE_PER_MINUTE).allowed).toBe(false)
    expect(log.take(T0 + 59_999, FIVE_PER_MINUTE).allowed).toBe(false)
    // The request of t=0 leaves the window at t=60 s: exactly one slot comes back.
    expect(log.take(T0 + 60_000, FIVE_PER_MINUTE)).toMatchObject({ allowed: true, remaining: 0 })
    expect(log.take(T0 + 60_001, FIVE_PER_MINUTE).allowed).toBe(false)
    expect(log.take(T0 + 75_000, FIVE_PER_MINUTE)).toMatchObject({ allowed: true, remaining: 0 })
  })

  it('frees the whole capacity one window after the last admission', () => {
    const log = new SlidingWindowLog()
    for (let i = 0; i < 5; i++) log.take(T0, FIVE_PER_MINUTE)
    expect(log.take(T0 + 30_000, FIVE_PER_MINUTE).allowed).toBe(false)
    const again = [0, 1, 2, 3, 4, 5].map(() => log.take(T0 + 60_000, FIVE_PER_MINUTE).allowed)
    expect(again).toEqual([true, true, true, true, true, false])
  })

  it('does not record refused requests (hammering does not extend the wait)', () => {
    const log = new SlidingWindowLog()
    for (let i = 0; i < 5; i++) log.take(T0, FIVE_PER_MINUTE)
    for (let s = 1; s < 60; s++)
      expect(log.take(T0 + s * 1000, FIVE_PER_MINUTE).allowed).toBe(false)
    expect(log.take(T0 + 60_000, FIVE_PER_MINUTE).allowed).toBe(true)
  })

  it('reports the full reset when allowed, and the freeing of a slot as every reset of a refusal', () => {
    const log = new SlidingWindowLog()
    log.take(T0, FIVE_PER_MINUTE)
    for (let i = 0; i < 3; i++) log.take(T0 + 20_000, FIVE_PER_MINUTE)
    const allowed = log.take(T0 + 20_000, FIVE_PER_MINUTE)
    expect(allowed).toMatchObject({ allowed: true, limit: 5, remaining: 0, retryAfterSeconds: 0 })
    expect(allowed.resetSeconds).toBe((T0 + 80_000) / 1000)
    expect(allowed.resetAfterSeconds).toBe(60)
    const denied = log.take(T0 + 30_500, FIVE_PER_MINUTE)
    expect(denied).toMatchObject({ allowed: false, limit: 5, remaining: 0 })
    // The t=0 admission leaves at 60 s: 29.5 s → 30, the same instant in all three.
    expect(denied.retryAfterSeconds).toBe(30)
    expect(denied.resetAfterSeconds).toBe(30)
    expect(denied.resetSeconds).toBe((T0 + 30_000) / 1000 + 30)
  })

  it('keeps the Unix reset equal to the current second plus the relative reset', () => {
    const log = new SlidingWindowLog()
    const at = T0 + 900
    const allowed = log.take(at, { max: 1, windowMs: 60_000 })
    expect(allowed.resetAfterSeconds).toBe(60)
    expect(allowed.resetSeconds).toBe(T0 / 1000 + 60)
    const denied = log.take(at + 200, { max: 1, windowMs: 60_000 }) // 59.8 s left → 60
    expect([denied.retryAfterSeconds, denied.resetAfterSeconds]).toEqual([60, 60])
    expect(denied.resetSeconds).toBe((T0 + 1_000) / 1000 + 60)
  })

  it('never answers Retry-After 0 on a refusal, even a millisecond before the slot frees', () => {
    const log = new SlidingWindowLog()
    log.take(T0, { max: 1, windowMs: 60_000 })
    const denied = log.take(T0 + 59_999, { max: 1, windowMs: 60_000 })
    expect(denied.allowed).toBe(false)
    expect(denied.retryAfterSeconds).toBe(1)
  })

  it('gives a released slot back', () => {
    const log = new SlidingWindowLog()
    const decisions = [0, 1, 2, 3, 4].map(() => log.take(T0, FIVE_PER_MINUTE))
    expect(log.take(T0, FIVE_PER_MINUTE).allowed).toBe(false)
    expect(log.release(decisions[2]!.stamp)).toBe(true)
    expect(log.take(T0 + 1, FIVE_PER_MINUTE)).toMatchObject({ allowed: true, remaining: 0 })
    expect(log.release(12345)).toBe(false)
  })

  it('stays exact when the clock steps back', () => {
    const log = new SlidingWindowLog()
    for (let i = 0; i < 3; i++) log.take(T0 + 10_000, FIVE_PER_MINUTE)
    for (let i = 0; i < 2; i++) expect(log.take(T0, FIVE_PER_MINUTE).allowed).toBe(true)
    expect(log.take(T0, FIVE_PER_MINUTE).allowed).toBe(false)
    // Admissions made while the clock was behind count from the newest time, never earlier.
    expect(log.take(T0 + 69_999, FIVE_PER_MINUTE).allowed).toBe(false)
    expect(log.take(T0 + 70_000, FIVE_PER_MINUTE).allowed).toBe(true)
  })

  it('keeps memory bounded over a long run (expired entries are dropped)', () => {
    const log = new SlidingWindowLog()
    for (let s = 0; s < 10_000; s++) log.take(T0 + s * 1000, { max: 60, windowMs: 60_000 })
    expect(log.count(T0 + 10_000 * 1000, 60_000)).toBe(59)
    expect(log.expiresAt(60_000)).toBe(T0 + 9_999_000 + 60_000)
  })
})

describe('parseRule', () => {
  it('reads throttle:<max>,<seconds> and defaults to 60 per 60 s', () => {
    expect(parseRule(['5', '60'])).toEqual({ max: 5, windowMs: 60_000 })
    expect(parseRule(['3', '3600'])).toEqual({ max: 3, windowMs: 3_600_000 })
    expect(parseRule([])).toEqual(DEFAULT_RULE)
    expect(DEFAULT_RULE).toEqual({ max: 60, windowMs: 60_000 })
    // One number: that many per the default 60 s window (Laravel's throttle:5).
    expect(parseRule(['5'])).toEqual({ max: 5, windowMs: 60_000 })
  })

  it.each([
    ['0', '60'],
    ['a', '60'],
    ['0'],
    ['5', '60', '1'],
    ['-1', '60'],
    ['5', '0'],
    ['1.5', '60'],
  ])('rejects throttle:%s', (...params: string[]) => {
    expect(() => parseRule(params)).toThrow(/one or two positive integers/)
  })
})
