/**
 * Waiting for a SQLite lock without blocking the event loop. better-sqlite3 is synchronous, and
 * SQLite's busy handler sleeps in the calling thread: with a 5 s busy_timeout, a write lock held by
 * another process (another `fw serve --workers` process, a backup, a shell) froze the whole server
 * for 5 s per store call, and concurrent calls stacked up. Here SQLite waits a moment only
 * (`BUSY_TIMEOUT_MS`, enough for the short writes of other workers), then the call is retried
 * from timers with backoff until `BUSY_BUDGET_MS` have passed since it started; then it fails with
 * SQLite's SQLITE_BUSY error, a store that is down (storeCall answers 503, as for PostgreSQL).
 */

/** How long SQLite itself waits for a lock (blocking the thread) per attempt, in milliseconds. */
export const BUSY_TIMEOUT_MS = 50
/** How long a store call may wait for a lock in all, in milliseconds. */
export const BUSY_BUDGET_MS = 5000

// The pause between two attempts: doubled from the first to the last, 50 to 100 % of it at random
// (workers that met the same lock do not retry in step). An attempt under the lock blocks for
// BUSY_TIMEOUT_MS: at 200 ms apart, a lock held for long blocks the loop a fifth of the time.
const FIRST_PAUSE_MS = 10
const LAST_PAUSE_MS = 200

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, _RECOVERY, _TIMEOUT). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^SQLITE_BUSY(_|$)/.test(code)
}

export interface BusyGateOptions {
  /** Default BUSY_BUDGET_MS. */
  budgetMs?: number | undefined
}

/**
 * Runs the synchronous calls of one database, retrying those that meet a lock. `work` must be a
 * statement in autocommit mode or a whole `db.transaction(...)`: SQLite applied nothing of a call
 * that failed with SQLITE_BUSY (better-sqlite3 rolls a transaction back), so it is run again whole.
 * Writes that find others waiting queue behind them (first come, first served) instead of each
 * blocking the thread on the lock; reads (which WAL lets through a write lock) go first.
 */
export class BusyGate {
  readonly #budgetMs: number
  /** The calls waiting for the lock, the one retrying included. */
  #waiting = 0
  #tail: Promise<unknown> = Promise.resolve()
  /** The SQLITE_BUSY error of the last attempt, null once one got through. */
  #busy: unknown = null
  #pauseMs = FIRST_PAUSE_MS

  constructor(options: BusyGateOptions = {}) {
    this.#budgetMs = options.budgetMs ?? BUSY_BUDGET_MS
  }

  read<T>(work: () => T): Promise<T> {
    return this.#run(work, true)
  }

  write<T>(work: () => T): Promise<T> {
    return this.#run(work, false)
  }

  async #run<T>(work: () => T, read: boolean): Promise<T> {
    const deadline = performance.now() + this.#budgetMs
    if (read || this.#waiting === 0) {
      try {
        return this.#attempt(work, read)
      } catch (error) {
        if (!isBusy(error)) throw error
      }
    }
    this.#waiting++
    const turn = this.#tail.then(() => this.#retry(work, read, deadline))
    this.#tail = turn.catch(() => {})
    try {
      return await turn
    } finally {
      this.#waiting--
    }
  }

  /** The first call in line: paused between attempts while the lock is held, up to its deadline. */
  async #retry<T>(work: () => T, read: boolean, deadline: number): Promise<T> {
    for (;;) {
      if (this.#busy !== null) {
        const left = deadline - performance.now()
        if (left <= 0) throw this.#busy
        const pause = this.#pauseMs * (0.5 + Math.random() / 2)
        this.#pauseMs = Math.min(this.#pauseMs * 2, LAST_PAUSE_MS)
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)))
      }
      try {
        return this.#attempt(work, read)
      } catch (error) {
        if (!isBusy(error)) throw error
      }
    }
  }

  #attempt<T>(work: () => T, read: boolean): T {
    try {
      const result = work()
      if (!read) this.#passed()
      return result
    } catch (error) {
      if (isBusy(error)) this.#busy = error
      else if (!read) this.#passed()
      throw error
    }
  }

  /** A write got past the lock (a result, or an error of its own): the lock is free. Reads pass
   * a write lock in WAL mode, so they tell nothing. */
  #passed(): void {
    this.#busy = null
    this.#pauseMs = FIRST_PAUSE_MS
  }
}
