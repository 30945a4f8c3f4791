/**
 * Counters for `fw serve --workers N` without Redis: the primary process holds them in a
 * MemoryStore and the workers ask over the node:cluster IPC channel. The primary handles one
 * message at a time, so a check stays atomic across workers and the limit holds for the whole
 * server, not per worker. A worker that gets no answer in time fails open or closed like a store
 * outage (the middleware decides).
 *
 * Primary:  setupThrottlePrimary()          (before forking; `fw serve` does it)
 * Worker:   createThrottle({ store: new ClusterStore() })
 */
import cluster, { type Worker } from 'node:cluster'
import { randomUUID } from 'node:crypto'
import type { ThrottleDecision, ThrottleRule } from './limiter.js'
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js'
import { ThrottleStoreError, type ThrottleStore } from './store.js'

/** Set in the primary's environment (and so in its workers') once it answers throttle checks. */
export const PRIMARY_ENV = 'FW_THROTTLE_PRIMARY'

/** The tag on every message of this protocol; other IPC traffic is left alone. */
const TAG = 'fw:throttle'

type Request =
  | {
      tag: typeof TAG
      op: 'hit'
      from: string
      id: number
      key: string
      max: number
      windowMs: number
    }
  | {
      tag: typeof TAG
      op: 'release'
      from: string
      id: number
      key: string
      max: number
      windowMs: number
      stamp: number
    }
type Reply = { tag: typeof TAG; op: 'reply'; to: string; id: number; decision: ThrottleDecision }

interface Pending {
  resolve: (decision: ThrottleDecision) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

export interface ClusterStoreOptions {
  /** How long to wait for the primary's answer. Default 1000 ms. */
  timeoutMs?: number
}

/**
 * The worker side: asks the primary for every check.
 * @example
 * const store = cluster.isWorker ? new ClusterStore() : new MemoryStore()
 */
export class ClusterStore implements ThrottleStore {
  readonly #id = randomUUID()
  readonly #pending = new Map<number, Pending>()
  readonly #timeoutMs: number
  #nextId = 1
  readonly #onMessage = (message: unknown): void => this.#settle(message)

  constructor(options: ClusterStoreOptions = {}) {
    if (typeof process.send !== 'function') {
      throw new Error(
        'ClusterStore runs in a cluster worker (or a child process with an IPC channel)',
      )
    }
    this.#timeoutMs = options.timeoutMs ?? 1000
    const others = process.listenerCount('message')
    process.on('message', this.#onMessage)
    // Listening for messages refs the IPC channel; it must not keep a draining worker alive.
    if (others === 0) process.channel?.unref()
  }

  hit(key: string, rule: ThrottleRule): Promise<ThrottleDecision> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.#fail(
            id,
            new ThrottleStoreError(
              `The primary did not answer a throttle check within ${this.#timeoutMs} ms`,
            ),
          ),
        this.#timeoutMs,
      )
      timer.unref()
      this.#pending.set(id, { resolve, reject, timer })
      this.#send(
        { tag: TAG, op: 'hit', from: this.#id, id, key, max: rule.max, windowMs: rule.windowMs },
        id,
      )
    })
  }

  release(key: string, rule: ThrottleRule, stamp: number): void {
    this.#send(
      {
        tag: TAG,
        op: 'release',
        from: this.#id,
        id: 0,
        key,
        max: rule.max,
        windowMs: rule.windowMs,
        stamp,
      },
      0,
    )
  }

  close(): void {
    process.off('message', this.#onMessage)
    for (const id of [...this.#pending.keys()])
      this.#fail(id, new ThrottleStoreError('The throttle store was closed'))
  }

  #send(message: Request, id: number): void {
    if (!process.connected)
      return this.#fail(id, new ThrottleStoreError('No IPC channel to the primary'))
    process.send!(message, undefined, {}, (error) => {
      if (error)
        this.#fail(
          id,
          new ThrottleStoreError(`Sending a throttle check failed: ${error.message}`, {
            cause: error,
          }),
        )
    })
  }

  #settle(message: unknown): void {
    const reply = message as Partial<Reply> | null
    if (reply?.tag !== TAG || reply.op !== 'reply' || reply.to !== this.#id) return
    const pending = this.#pending.get(reply.id!)
    if (!pending) return
    this.#pending.delete(reply.id!)
    clearTimeout(pending.timer)
    pending.resolve(reply.decision!)
  }

  #fail(id: number, error: Error): void {
    const pending = this.#pending.get(id)
    if (!pending) return
    this.#pending.delete(id)
    clearTimeout(pending.timer)
    pending.reject(error)
  }
}

/**
 * The primary side: answers the workers' checks from one MemoryStore. Call it in the primary
 * before forking; returns a function that stops answering.
 * @example
 * if (cluster.isPrimary && !process.env.REDIS_URL) setupThrottlePrimary()
 */
export function setupThrottlePrimary(
  options: MemoryStoreOptions & { store?: MemoryStore } = {},
): () => void {
  const store = options.store ?? new MemoryStore(options)
  const onMessage = (worker: Worker, message: unknown): void => {
    const request = message as Partial<Request> | null
    if (request?.tag !== TAG || typeof request.key !== 'string') return
    const rule = { max: Number(request.max), windowMs: Number(request.windowMs) }
    if (request.op === 'release')
      return void store.release(request.key, rule, Number(request.stamp))
    if (request.op !== 'hit') return
    const reply: Reply = {
      tag: TAG,
      op: 'reply',
      to: String(request.from),
      id: Number(request.id),
      decision: store.hit(request.key, rule),
    }
    if (worker.isConnected()) worker.send(reply, undefined, () => {}) // a worker that just died has no one waiting
  }
  cluster.on('message', onMessage)
  // Workers forked from here on inherit it: createStoreFromEnv() then picks the ClusterStore.
  process.env[PRIMARY_ENV] = '1'
  return () => {
    cluster.off('message', onMessage)
    delete process.env[PRIMARY_ENV]
  }
}
