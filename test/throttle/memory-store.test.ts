/** The in-process store: exact under concurrency, bounded in keys, swept lazily, no timers. */
import { describe, expect, it } from 'vitest'
import { MemoryStore } from '../../src/throttle/memory-store.js'

const FIVE_PER_MINUTE = { max: 5, windowMs: 60_000 }

function fakeClock(start = 1_700_000_000_000): {
  now: () => number
  advance: (ms: number) => void
} {
  let time = start
  return { now: () => time, advance: (ms) => void (time += ms) }
}

describe('MemoryStore', () => {
  it('50 concurrent checks against 5/60 → exactly 5 pass', async () => {
    const store = new MemoryStore()
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () =>
        Promise.resolve().then(() => store.hit('k', FIVE_PER_MINUTE)),
      ),
    )
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5)
    expect(
      decisions
        .filter((d) => !d.allowed)
        .every((d) => d.remaining === 0 && d.retryAfterSeconds >= 1),
    ).toBe(true)
  })

  it('keeps keys apart and brings capacity back as the injected clock advances', () => {
    const clock = fakeClock()
    const store = new MemoryStore({ clock: clock.now })
    for (let i = 0; i < 5; i++) expect(store.hit('a', FIVE_PER_MINUTE).allowed).toBe(true)
    expect(store.hit('a', FIVE_PER_MINUTE).allowed).toBe(false)
    expect(store.hit('b', FIVE_PER_MINUTE).allowed).toBe(true)
    clock.advance(59_999)
    expect(store.hit('a', FIVE_PER_MINUTE).allowed).toBe(false)
    clock.advance(1)
    expect(store.hit('a', FIVE_PER_MINUTE)).toMatchObject({ allowed: true, remaining: 4 })
  })

  it('evicts the least recently used key beyond maxKeys', () => {
    const store = new MemoryStore({ maxKeys: 3, clock: fakeClock().now })
    for (const key of ['a', 'b', 'c']) store.hit(key, FIVE_PER_MINUTE)
    store.hit('a', FIVE_PER_MINUTE) // a is now the most recently used; b the least
    store.hit('d', FIVE_PER_MINUTE)
    expect(store.size).toBe(3)
    // b was evicted: it starts over with a full budget; a kept its two admissions.
    expect(store.hit('b', FIVE_PER_MINUTE).remaining).toBe(4)
    expect(store.hit('a', FIVE_PER_MINUTE).remaining).toBe(2)
  })

  // Plain LRU let a flood of new keys (one IPv6 /48 is 65,536 buckets) evict an exhausted
  // client's counter, which then started over with a full budget.
  it('keeps a counter that is refusing its client through a flood of new keys', () => {
    const store = new MemoryStore({ maxKeys: 100, clock: fakeClock().now })
    for (let i = 0; i < 5; i++) store.hit('ip:attacker', FIVE_PER_MINUTE)
    expect(store.hit('ip:attacker', FIVE_PER_MINUTE).allowed).toBe(false)
    for (let i = 0; i < 50_000; i++) store.hit(`ip:flood-${i}`, FIVE_PER_MINUTE)
    expect(store.size).toBe(100)
    expect(store.hit('ip:attacker', FIVE_PER_MINUTE).allowed).toBe(false)
  })

  it('still evicts in LRU order once every candidate is refusing (the bound holds)', () => {
    const store = new MemoryStore({ maxKeys: 20, clock: fakeClock().now })
    const one = { max: 1, windowMs: 60_000 }
    for (let i = 0; i < 1000; i++) {
      store.hit(`ip:${i}`, one)
      store.hit(`ip:${i}`, one) // each key refuses from its second hit
    }
    expect(store.size).toBe(20)
  })

  it('never holds more than maxKeys counters under a flood of new keys', () => {
    const store = new MemoryStore({ maxKeys: 1000, clock: fakeClock().now })
    for (let i = 0; i < 20_000; i++) store.hit(`ip:${i}`, FIVE_PER_MINUTE)
    expect(store.size).toBe(1000)
  })

  it('sweeps expired counters lazily as new checks arrive', () => {
    const clock = fakeClock()
    const store = new MemoryStore({ clock: clock.now })
    for (let i = 0; i < 100; i++) store.hit(`old:${i}`, FIVE_PER_MINUTE)
    clock.advance(60_000)
    for (let i = 0; i < 60; i++) store.hit(`new:${i}`, FIVE_PER_MINUTE)
    expect(store.size).toBe(60) // 2 expired ones dropped per check
  })

  it('prune() drops every expired counter at once', () => {
    const clock = fakeClock()
    const store = new MemoryStore({ clock: clock.now })
    store.hit('short', { max: 1, windowMs: 1000 })
    store.hit('long', { max: 1, windowMs: 60_000 })
    clock.advance(1000)
    store.prune()
    expect(store.size).toBe(1)
  })

  it('release() gives an admission back', () => {
    const store = new MemoryStore({ clock: fakeClock().now })
    const first = store.hit('k', { max: 1, windowMs: 60_000 })
    expect(store.hit('k', { max: 1, windowMs: 60_000 }).allowed).toBe(false)
    store.release('k', { max: 1, windowMs: 60_000 }, first.stamp)
    expect(store.hit('k', { max: 1, windowMs: 60_000 }).allowed).toBe(true)
  })
})
