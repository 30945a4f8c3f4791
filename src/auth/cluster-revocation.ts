/**
 * The revocation list for `fw serve --workers N` without Redis: the primary process holds it in a
 * MemoryRevocationList and the workers ask over the node:cluster IPC channel
 * (src/runtime/cluster-ipc.ts), so a logout holds on every worker, not only on the one that
 * answered it, and a token refreshes once for the whole server. The primary handles one message at a time, so revoke stays a test-and-set across
 * workers. A worker that gets no answer in time rejects: the callers answer 503 (fail closed).
 *
 * Primary:  setupRevocationPrimary()         (before forking; `fw serve` does it)
 * Worker:   createAuth({ revocations: new ClusterRevocationList() })   (defaultAuth() does it)
 */
import { answerWorkers, PrimaryClient } from '../runtime/cluster-ipc.js'
import {
  MEMORY_REVOCATION_OPTIONS,
  MemoryRevocationList,
  RevocationListFullError,
  type MemoryRevocationOptions,
  type RevocationList,
} from './revocation.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

/** Set in the primary's environment (and so in its workers') once it answers revocation calls. */
export const REVOCATION_PRIMARY_ENV = 'FW_REVOCATION_PRIMARY'

/** The tag on every message of this protocol; other IPC traffic is left alone. */
const TAG = 'fw:revocation'

/**
 * The primary's answer when its list has no room: a value, not an error, so that the worker
 * throws a RevocationListFullError again (a durable list then takes back the row it wrote).
 */
interface Full {
  full: { max: number; subject?: string }
}

export interface ClusterRevocationOptions {
  /** How long to wait for the primary's answer. Default 1000 ms. */
  timeoutMs?: number
}

const CLUSTER_REVOCATION_OPTIONS = optionNames<ClusterRevocationOptions>({ timeoutMs: 1 })
const PRIMARY_OPTIONS = [...MEMORY_REVOCATION_OPTIONS, 'list']

/**
 * The worker side: asks the primary for every revoke and every check.
 * @example
 * const revocations = cluster.isWorker ? new ClusterRevocationList() : new MemoryRevocationList()
 */
export class ClusterRevocationList implements RevocationList {
  readonly #primary: PrimaryClient

  constructor(options: ClusterRevocationOptions = {}) {
    checkOptions('new ClusterRevocationList()', options, CLUSTER_REVOCATION_OPTIONS)
    this.#primary = new PrimaryClient({
      tag: TAG,
      what: 'a revocation call',
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    })
  }

  revoke(jti: string, expiresAt: number, subject?: string): Promise<boolean> {
    return this.#ask({ op: 'revoke', jti, expiresAt, subject })
  }

  /** Asks the primary's list for room, before a durable list writes its database. */
  async assertRoom(jti: string, subject?: string): Promise<void> {
    await this.#ask({ op: 'assertRoom', jti, subject })
  }

  isRevoked(jti: string): Promise<boolean> {
    return this.#ask({ op: 'isRevoked', jti })
  }

  async close(): Promise<void> {
    this.#primary.close('The revocation list was closed')
  }

  async #ask(call: Record<string, unknown>): Promise<boolean> {
    const answer = await this.#primary.ask(call)
    const full = (answer as Partial<Full> | null)?.full
    if (full !== undefined && typeof full.max === 'number')
      throw new RevocationListFullError(
        full.max,
        typeof full.subject === 'string' ? full.subject : undefined,
      )
    // Anything but a plain answer is a failure: a token is never let through on a guess.
    if (typeof answer !== 'boolean')
      throw new Error(`The primary answered a revocation call with ${typeof answer}`)
    return answer
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
  checkOptions('setupRevocationPrimary()', options, PRIMARY_OPTIONS)
  // `list` is no MemoryRevocationList option: left in, the list refused it as unknown.
  const { list: given, ...memory } = options
  const list = given ?? new MemoryRevocationList(memory)
  // Called as the message arrives, not queued: the memory list tests and sets before its first
  // await, so no other worker's call comes in between. A malformed call gets no answer (its
  // worker times out: 503), never a crash.
  const stop = answerWorkers(TAG, (request) => {
    const { op, jti } = request
    if (typeof jti !== 'string') return undefined
    if (op === 'isRevoked') return list.isRevoked(jti)
    const subject = typeof request.subject === 'string' ? request.subject : undefined
    if (op === 'assertRoom') return answerFull(() => (list.assertRoom(jti, subject), true))
    const expiresAt = Number(request.expiresAt)
    return op === 'revoke' && Number.isFinite(expiresAt)
      ? answerFull(() => list.revoke(jti, expiresAt, subject))
      : undefined
  })
  // Workers forked from here on inherit it: their defaultAuth() then asks this primary.
  process.env[REVOCATION_PRIMARY_ENV] = '1'
  return () => {
    stop()
    delete process.env[REVOCATION_PRIMARY_ENV]
  }
}

/** `call`'s value, or its RevocationListFullError as a Full answer (other errors reject). */
async function answerFull(call: () => boolean | Promise<boolean>): Promise<boolean | Full> {
  try {
    return await call()
  } catch (error) {
    if (!(error instanceof RevocationListFullError)) throw error
    return {
      full: { max: error.max, ...(error.subject === undefined ? {} : { subject: error.subject }) },
    }
  }
}
