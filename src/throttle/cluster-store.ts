/**
 * Counters for `fw serve --workers N` without Redis: the primary process holds them in a
 * MemoryStore and the workers ask over the node:cluster IPC channel (src/runtime/cluster-ipc.ts).
 * The primary handles one message at a time, so a check stays atomic across workers and the limit
 * holds for the whole server, not per worker. A worker that gets no answer in time fails open or
 * closed like a store outage (the middleware decides).
 *
 * Primary:  setupThrottlePrimary()          (before forking; `fw serve` does it)
 * Worker:   createThrottle({ store: new ClusterStore() })
 */
import { answerWorkers, PrimaryClient } from '../runtime/cluster-ipc.js'
import type { ThrottleDecision, ThrottleRule } from './limiter.js'
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js'
import { ThrottleStoreError, type ThrottleStore } from './store.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

/** Set in the primary's environment (and so in its workers') once it answers throttle checks. */
export const PRIMARY_ENV = 'FW_THROTTLE_PRIMARY'

/** The tag on every message of this protocol; other IPC traffic is left alone. */
const TAG = 'fw:throttle'

export interface ClusterStoreOptions {
  /** How long to wait for the primary's answer. Default 1000 ms. */
  timeoutMs?: number
}

/**
 * The worker side: asks the primary for every check.
 * @example
 * const store = cluster.isWorker ? new ClusterStore() : new MemoryStore()
 */
const CLUSTER_STORE_OPTIONS = optionNames<ClusterStoreOptions>({ timeoutMs: 1 })

export class ClusterStore implements ThrottleStore {
  readonly #primary: PrimaryClient

  constructor(options: ClusterStoreOptions = {}) {
    checkOptions('new ClusterStore()', options, CLUSTER_STORE_OPTIONS)
    this.#primary = new PrimaryClient({
      tag: TAG,
      what: 'a throttle check',
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      error: (message, cause) => new ThrottleStoreError(message, cause),
    })
  }

  async hit(key: string, rule: ThrottleRule): Promise<ThrottleDecision> {
    return (await this.#primary.ask({
      op: 'hit',
      key,
      max: rule.max,
      windowMs: rule.windowMs,
    })) as ThrottleDecision
  }

  async peek(key: string, rule: ThrottleRule): Promise<ThrottleDecision | null> {
    const question = { op: 'peek', key, max: rule.max, windowMs: rule.windowMs }
    return (await this.#primary.ask(question)) as ThrottleDecision | null
  }

  release(key: string, rule: ThrottleRule, stamp: number): void {
    this.#primary.tell({ op: 'release', key, max: rule.max, windowMs: rule.windowMs, stamp })
  }

  close(): void {
    this.#primary.close('The throttle store was closed')
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
  // `store` is no MemoryStore option: left in, the store refused it as unknown.
  const { store: given, ...memory } = options
  const store = given ?? new MemoryStore(memory)
  const stop = answerWorkers(TAG, (request) => {
    if (typeof request.key !== 'string') return undefined
    const rule = { max: Number(request.max), windowMs: Number(request.windowMs) }
    if (request.op === 'release')
      return void store.release(request.key, rule, Number(request.stamp))
    if (request.op === 'peek') return store.peek(request.key, rule)
    return request.op === 'hit' ? store.hit(request.key, rule) : undefined
  })
  // Workers forked from here on inherit it: createStoreFromEnv() then picks the ClusterStore.
  process.env[PRIMARY_ENV] = '1'
  return () => {
    stop()
    delete process.env[PRIMARY_ENV]
  }
}
