/**
 * mulberry32: a small deterministic PRNG for the seeded tests (parity, regex, URL round trips),
 * so a failure reproduces from its seed. Returns numbers in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Seeded choices over a PRNG such as mulberry32's, for generating route sets and paths.
 * @example
 * const g = new Gen(mulberry32(seed))
 * const segment = g.chance(0.3) ? `{p${g.int(3)}}` : g.text('abc', 1, 4)
 */
export class Gen {
  constructor(readonly rand: () => number) {}
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)]!
  }
  chance(p: number): boolean {
    return this.rand() < p
  }
  int(max: number): number {
    return Math.floor(this.rand() * max)
  }
  /** `min` to `max` characters taken from `chars`. */
  text(chars: string, min: number, max: number): string {
    const length = min + this.int(max - min + 1)
    return Array.from({ length }, () => this.pick([...chars])).join('')
  }
}
