/**
 * The bytes of a body as they arrive, for one Buffer at the end. A body that came in one chunk is
 * that chunk (no copy). Otherwise the chunks are copied into one buffer that doubles as it fills:
 * chunked encoding lets a client send 1 MiB as a million 1-byte chunks, and kept as they came
 * those were a million Buffer objects (~100 MB of heap for one request; a few such requests ran
 * a server out of memory). Copied, a body holds at most twice its bytes.
 * @example
 * const bytes = new BodyBytes()
 * stream.on('data', (chunk) => bytes.add(chunk))
 * stream.on('end', () => use(bytes.bytes()))
 */
export class BodyBytes {
  #first: Buffer | null = null
  #buffer: Buffer | null = null
  #size = 0

  /** Bytes so far. */
  get size(): number {
    return this.#size
  }

  add(chunk: Buffer): void {
    if (this.#buffer === null && this.#first === null) {
      this.#first = chunk
      this.#size = chunk.length
      return
    }
    const size = this.#size + chunk.length
    if (this.#buffer === null || size > this.#buffer.length) this.#grow(size)
    chunk.copy(this.#buffer!, this.#size)
    this.#size = size
  }

  /**
   * Everything added, in order. `own`: a copy when the body came in one chunk, which otherwise
   * shares its memory with the stream's (a decoder's 16 KiB output buffer, say).
   */
  bytes(own = false): Buffer {
    if (this.#buffer !== null) return this.#buffer.subarray(0, this.#size)
    if (this.#first === null) return Buffer.alloc(0)
    return own ? Buffer.from(this.#first) : this.#first
  }

  // Doubling: a million 1-byte chunks cost 20 copies of what came before, not a million.
  #grow(needed: number): void {
    const next = Buffer.allocUnsafe(Math.max(needed, 2 * (this.#buffer?.length ?? this.#size)))
    ;(this.#buffer ?? this.#first)!.copy(next, 0, 0, this.#size)
    this.#buffer = next
    this.#first = null
  }
}
