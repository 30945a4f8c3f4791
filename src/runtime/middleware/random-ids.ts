/**
 * Random ids for request and trace ids, made 256 at a time: one randomFillSync (a system call
 * per id cost ~10 µs) and one string per batch, handed out as slices of it — a single small
 * string object per id (crypto.randomUUID() left ~600 bytes of string pieces per call).
 */
import { randomFillSync } from 'node:crypto'

const BATCH = 256
const BYTES = 16
const HEX = Buffer.from('0123456789abcdef')

/** Writes `count` bytes of `random` from `from` as hex digits into `text` at `at`; returns the end. */
export function writeHex(random: Buffer, from: number, count: number, text: Buffer, at: number): number {
  for (let i = from; i < from + count; i++) {
    const byte = random[i]!
    text[at++] = HEX[byte >> 4]!
    text[at++] = HEX[byte & 15]!
  }
  return at
}

/**
 * A generator of `width`-character ids, each written by `write` from 16 random bytes at
 * `random[r]` into `text[t]` (ASCII).
 * @example
 * const next = idSource(32, (random, r, text, t) => writeHex(random, r, 16, text, t))
 */
export function idSource(width: number, write: (random: Buffer, r: number, text: Buffer, t: number) => void): () => string {
  const random = Buffer.alloc(BYTES * BATCH)
  const text = Buffer.alloc(width * BATCH)
  let ids = ''
  let next = BATCH
  return () => {
    if (next === BATCH) {
      randomFillSync(random)
      for (let id = 0; id < BATCH; id++) write(random, id * BYTES, text, id * width)
      ids = text.toString('latin1')
      next = 0
    }
    const at = next++ * width
    return ids.slice(at, at + width)
  }
}
