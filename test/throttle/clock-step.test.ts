/**
 * The in-memory throttle keeps time on the monotonic clock: a wall clock stepped back (NTP, a VM
 * restored from a snapshot) left every client that had used its window refused for as long as
 * the step, an hour's step with `Retry-After: 3660` at `throttle:2,60`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryStore } from '../../src/throttle/memory-store.js'

afterEach(() => vi.restoreAllMocks())

describe('the memory store when the wall clock steps back an hour', () => {
  it('keeps the window it had: the wait is at most the window, not the step', () => {
    const store = new MemoryStore()
    const rule = { max: 2, windowMs: 60_000 }
    expect(store.hit('k', rule).allowed).toBe(true)
    const real = Date.now()
    vi.spyOn(Date, 'now').mockImplementation(() => real - 3_600_000)
    expect(store.hit('k', rule).allowed).toBe(true)
    const refused = store.hit('k', rule)
    expect(refused.allowed).toBe(false)
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60)
    // X-RateLimit-Reset still names a time about a minute from now, on the real clock.
    expect(Math.abs(refused.resetSeconds - Math.floor(real / 1000) - 60)).toBeLessThanOrEqual(1)
  })
})
