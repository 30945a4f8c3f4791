/**
 * The revocation list for `fw serve --workers N` without Redis: the primary process holds it in a
 * MemoryRevocationList and the workers ask over the node:cluster IPC channel, so a logout holds on
 * every worker, not only on the one that answered it, and a token refreshes once for the whole
 * server. The primary handles one message at a time, so revoke stays a test-and-set across
 * workers. A worker that gets no answer in time rejects: the callers answer 503 (fail closed).
 *
 * Primary:  setupRevocationPrimary()         (before forking; `fw serve` does it)
 * Worker:   createAuth({ revocations: new ClusterRevocationList() })   (defaultAuth() does it)
 */
import cluster, { type Worker } from 'node:cluster'
import { randomUUID } from 'node:crypto'
import {
  MemoryRevocationList,
  type MemoryRevocationOptions,
  type RevocationList,
} from './revocation.js'

/** Set in the primary's environment (and so in its workers') once it answers revocation calls. */
export const REVOCATION_PRIMARY_ENV = 'FW_REVOCATION_PRIMARY'

/** The tag on every message of this protocol; other IPC traffic is left alone. */
const TAG = 'fw:revocation'

type Call = { op: 'revoke'; jti: string; expiresAt: number } | { op: 'isRevoked'; jti: string }
type Request = Call & { tag: typeof TAG; from: string; id: number }
/** `result` when the primary's list answered, `error` (its message) when it refused. */
type Reply = {
  tag: typeof TAG
  op: 'reply'
  to: string
  id: number
  result?: boolean
  error?: string
}

interface Pending {
  resolve: (result: boolean) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

export interface ClusterRevocationOptions {
  /** How long to wait for the primary's answer. Default 1000 ms. */
  timeoutMs?: number
}

/**
 * The worker side: asks the primary for every revoke and every check.
 * @example
 * const revocations = cluster.isWorker ? new ClusterRevocationList() : new MemoryRevocationList()
 */
export class ClusterRevocationList implements RevocationList {
  readonly #id = randomUUID()
  readonly #pending = new Map<number, Pending>()
  readonly #timeoutMs: number
  #nextId = 1
  readonly #onMessage = (message: unknown): void => this.#settle(message)

  constructor(options: ClusterRevocationOptions = {}) {
    if (typeof process.send !== 'function') {
      throw new Error(
        'ClusterRevocationList runs in a cluster worker (or a child process with an IPC channel)',
      )
    }
    this.#timeoutMs = options.timeoutMs ?? 1000
    const others = process.listenerCount('message')
    process.on('message', this.#onMessage)
    // Listening for messages refs the IPC channel; it must not keep a draining worker alive.
    if (others === 0) process.channel?.unref()
  }

  revoke(jti: string, expiresAt: number): Promise<boolean> {
    return this.#ask({ op: 'revoke', jti, expiresAt })
  }

  isRevoked(jti: string): Promise<boolean> {
    return this.#ask({ op: 'isRevoked', jti })
  }

  async close(): Promise<void> {
    process.off('message', this.#onMessage)
    for (const id of [...this.#pending.keys()])
      this.#fail(id, new Error('The revocation list was closed'))
  }

  #ask(call: Call): Promise<boolean> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.#fail(
            id,
            new Error(`The primary did not answer a revocation call within ${this.#timeoutMs} ms`),
          ),
        this.#timeoutMs,
      )
      timer.unref()
      this.#pending.set(id, { resolve, reject, timer })
      if (!process.connected) return this.#fail(id, new Error('No IPC channel to the primary'))
      const request: Request = { ...call, tag: TAG, from: this.#id, id }
      process.send!(request, undefined, {}, (error) => {
        if (error)
          this.#fail(
            id,
            new Error(`Sending a revocation call failed: ${error.message}`, { cause: error }),
          )
      })
    })
  }

  #settle(message: unknown): void {
    const reply = message as Partial<Reply> | null
    if (reply?.tag !== TAG || reply.op !== 'reply' || reply.to !== this.#id) return
    const pending = this.#pending.get(reply.id!)
    if (!pending) return
    this.#pending.delete(reply.id!)
    clearTimeout(pending.timer)
    // Anything but a plain answer is a failure: a token is never let through on a guess.
    if (typeof reply.result === 'boolean') pending.resolve(reply.result)
    else pending.reject(new Error(`The primary's revocation list failed: ${String(reply.error)}`))
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
 * The primary side: answers the workers' calls from one MemoryRevocationList. Call it in the
 * primary before forking; returns a function that stops answering.
 * @example
 * if (cluster.isPrimary && !process.env.REDIS_URL) setupRevocationPrimary()
 */
export function setupRevocationPrimary(
  options: MemoryRevocationOptions & { list?: MemoryRevocationList } = {},
): () => void {
  const list = options.list ?? new MemoryRevocationList(options)
  const onMessage = (worker: Worker, message: unknown): void => {
    // Any shape may arrive: a malformed call is dropped (its worker times out), never a crash.
    const request = message as { [K in keyof Request | 'expiresAt']?: unknown } | null
    if (request?.tag !== TAG || typeof request.jti !== 'string') return
    const { op, jti } = request
    const expiresAt = Number(request.expiresAt)
    if (op !== 'isRevoked' && (op !== 'revoke' || !Number.isFinite(expiresAt))) return
    // Called now, not queued: the memory list tests and sets before its first await, so no other
    // worker's call comes in between (and a throw becomes an error reply, not a crash).
    const answer = (async () =>
      op === 'revoke' ? list.revoke(jti, expiresAt) : list.isRevoked(jti))()
    const reply = (outcome: Pick<Reply, 'result' | 'error'>): void => {
      const message: Reply = {
        tag: TAG,
        op: 'reply',
        to: String(request.from),
        id: Number(request.id),
        ...outcome,
      }
      // A worker that died meanwhile has no one waiting.
      if (worker.isConnected()) worker.send(message, undefined, () => {})
    }
    answer.then(
      (result) => reply({ result }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    )
  }
  cluster.on('message', onMessage)
  // Workers forked from here on inherit it: their defaultAuth() then asks this primary.
  process.env[REVOCATION_PRIMARY_ENV] = '1'
  return () => {
    cluster.off('message', onMessage)
    delete process.env[REVOCATION_PRIMARY_ENV]
  }
}
