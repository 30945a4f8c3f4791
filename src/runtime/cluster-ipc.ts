/**
 * Questions from cluster workers to their primary over the node:cluster IPC channel, for state
 * the primary keeps for all workers when there is no Redis (the throttle counters, the revocation
 * list). Each protocol has its own tag, and other IPC traffic is left alone. The primary answers
 * each message as it arrives, one at a time, so an answer that tests and sets before its first
 * await is atomic across workers. A worker that gets no answer in time rejects, and its caller
 * fails open or closed as for a store outage.
 *
 * Request: { tag, from, id, ...payload }   (id 0: no answer wanted)
 * Reply:   { tag, op: 'reply', to, id, value } or { ..., error }
 */
import cluster, { type Worker } from 'node:cluster'
import { randomUUID } from 'node:crypto'
import { thrownMessage } from '../shared/thrown.js'

interface Reply {
  tag: string
  op: 'reply'
  to: string
  id: number
  value?: unknown
  error?: string
}

interface Pending {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

export interface PrimaryClientOptions {
  /** The protocol's tag, e.g. 'fw:throttle'. */
  tag: string
  /** What is asked, for messages: 'a throttle check'. */
  what: string
  /** How long to wait for the primary's answer. Default 1000 ms. */
  timeoutMs?: number
  /** The error to reject with (a store's own error class). Default Error. */
  error?: (message: string, options?: { cause: unknown }) => Error
}

/**
 * The worker side of one protocol.
 * @example
 * const primary = new PrimaryClient({ tag: 'fw:revocation', what: 'a revocation call' })
 * const revoked = await primary.ask({ op: 'isRevoked', jti })
 */
export class PrimaryClient {
  readonly #id = randomUUID()
  readonly #pending = new Map<number, Pending>()
  readonly #tag: string
  readonly #what: string
  readonly #timeoutMs: number
  readonly #error: NonNullable<PrimaryClientOptions['error']>
  #nextId = 1
  readonly #onMessage = (message: unknown): void => this.#settle(message)

  constructor(options: PrimaryClientOptions) {
    this.#tag = options.tag
    this.#what = options.what
    this.#timeoutMs = options.timeoutMs ?? 1000
    this.#error = options.error ?? ((message, cause) => new Error(message, cause))
    if (typeof process.send !== 'function') {
      throw new Error(
        `Asking the primary ${options.what} needs a cluster worker (or a child process with an IPC channel)`,
      )
    }
    const others = process.listenerCount('message')
    process.on('message', this.#onMessage)
    // Listening for messages refs the IPC channel; it must not keep a draining worker alive.
    if (others === 0) process.channel?.unref()
  }

  /** Sends `payload` and resolves with the primary's answer (rejects on timeout or its error). */
  ask(payload: Record<string, unknown>): Promise<unknown> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const late = (): void =>
        this.#fail(
          id,
          this.#error(`The primary did not answer ${this.#what} within ${this.#timeoutMs} ms`),
        )
      const timer = setTimeout(late, this.#timeoutMs)
      timer.unref()
      this.#pending.set(id, { resolve, reject, timer })
      this.#send(payload, id)
    })
  }

  /** Sends `payload` with no answer wanted. */
  tell(payload: Record<string, unknown>): void {
    this.#send(payload, 0)
  }

  /** Stops listening; what is still waiting rejects with `reason`. */
  close(reason: string): void {
    process.off('message', this.#onMessage)
    for (const id of [...this.#pending.keys()]) this.#fail(id, this.#error(reason))
  }

  #send(payload: Record<string, unknown>, id: number): void {
    if (!process.connected) return this.#fail(id, this.#error('No IPC channel to the primary'))
    process.send!({ ...payload, tag: this.#tag, from: this.#id, id }, undefined, {}, (error) => {
      if (error)
        this.#fail(
          id,
          this.#error(`Sending ${this.#what} failed: ${error.message}`, { cause: error }),
        )
    })
  }

  #settle(message: unknown): void {
    const reply = message as Partial<Reply> | null
    if (reply?.tag !== this.#tag || reply.op !== 'reply' || reply.to !== this.#id) return
    const pending = this.#pending.get(reply.id!)
    if (!pending) return
    this.#pending.delete(reply.id!)
    clearTimeout(pending.timer)
    if (reply.error === undefined) pending.resolve(reply.value)
    else pending.reject(this.#error(`The primary failed ${this.#what}: ${String(reply.error)}`))
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
 * The primary side of one protocol: `answer` gets every request tagged `tag` (any shape may
 * arrive: check it) and returns the value to send back, or a promise of it. A thrown error or a
 * rejection is sent as an error; `undefined` from a malformed request sends nothing (the worker
 * times out). Call it before forking; returns a function that stops answering.
 * @example
 * answerWorkers('fw:revocation', (request) => list.isRevoked(String(request.jti)))
 */
export function answerWorkers(
  tag: string,
  answer: (request: Readonly<Record<string, unknown>>) => unknown,
): () => void {
  const onMessage = (worker: Worker, message: unknown): void => {
    const request = message as Record<string, unknown> | null
    if (request === null || typeof request !== 'object' || request.tag !== tag) return
    let value: unknown
    try {
      value = answer(request)
    } catch (error) {
      value = Promise.reject(error)
    }
    if (value === undefined) return
    // No answer wanted: a failure has no one to go to, and must not become the primary's
    // unhandled rejection (which ends `fw serve`, its workers with it).
    if (Number(request.id) === 0) return void Promise.resolve(value).catch(() => {})
    const reply = (outcome: Pick<Reply, 'value' | 'error'>): void => {
      const message: Reply = {
        tag,
        op: 'reply',
        to: String(request.from),
        id: Number(request.id),
        ...outcome,
      }
      // A worker that died meanwhile has no one waiting.
      if (worker.isConnected()) worker.send(message, undefined, () => {})
    }
    Promise.resolve(value).then(
      (result) => reply({ value: result }),
      (error: unknown) => reply({ error: thrownMessage(error) }),
    )
  }
  cluster.on('message', onMessage)
  return () => void cluster.off('message', onMessage)
}
