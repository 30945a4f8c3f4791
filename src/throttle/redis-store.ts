/**
 * Counters in Redis, shared by every process and host that points at it.
 *
 * One round-trip per check: a Lua script (EVALSHA, falling back to EVAL once after a script
 * flush) runs the sliding window log of limiter.ts atomically on the server, on a list of
 * admission times, newest first. It reads the clock with `TIME`, so processes whose clocks
 * disagree still agree on every window. A dead Redis never hangs a request: no offline queue,
 * one retry at most, a short command timeout; the middleware then fails open or closed. A
 * connection passed in as `client` has ioredis's defaults (an offline queue, 20 retries, no
 * command timeout: a request waited for as long as Redis was down or silent), so the store puts
 * its own time limit on each of its commands.
 */
import { createHash } from 'node:crypto'
import { Redis, type RedisOptions } from 'ioredis'
import { decide, type ThrottleDecision, type ThrottleRule } from './limiter.js'
import { ThrottleStoreError, type ThrottleStore } from './store.js'
import { within } from '../shared/within.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

// KEYS[1] the counter; ARGV[1] max, ARGV[2] window (ms). Returns
// { allowed 0/1, remaining, newest admission, admission whose expiry frees a slot, now } in ms.
const SCRIPT = `
local key, max, window = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
while true do
  local last = redis.call('LINDEX', key, -1)
  if not last or tonumber(last) > now - window then break end
  redis.call('RPOP', key)
end
local used = redis.call('LLEN', key)
local newest = tonumber(redis.call('LINDEX', key, 0) or now)
if used >= max then
  return { 0, 0, newest, tonumber(redis.call('LINDEX', key, max - 1)), now }
end
local at = math.max(now, newest)
redis.call('LPUSH', key, string.format('%.0f', at))
redis.call('PEXPIRE', key, window + at - now)
return { 1, max - used - 1, at, at, now }
`
const SHA = createHash('sha1').update(SCRIPT).digest('hex')

// The same log, read only: { the admission whose expiry frees a slot (-1 when one is free), now }.
const PEEK_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local oldest = redis.call('LINDEX', KEYS[1], tonumber(ARGV[1]) - 1)
if not oldest or tonumber(oldest) <= now - tonumber(ARGV[2]) then return { -1, now } end
return { tonumber(oldest), now }
`
const PEEK_SHA = createHash('sha1').update(PEEK_SCRIPT).digest('hex')

export interface RedisStoreOptions {
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. Ignored when `client` is given. */
  url?: string | undefined
  /** An existing connection; the store then leaves closing it to you. */
  client?: Redis | undefined
  /** Prepended to every key. Default 'fw:throttle:'. */
  prefix?: string | undefined
  /**
   * A check slower than this fails (and the middleware fails open or closed), also on a `client`
   * passed in. Default 500 ms.
   */
  commandTimeoutMs?: number | undefined
  /** How long the first checks wait for the initial connection. Default 1000 ms. */
  connectTimeoutMs?: number | undefined
}

const REDIS_OPTIONS = optionNames<RedisStoreOptions>({
  url: 1,
  client: 1,
  prefix: 1,
  commandTimeoutMs: 1,
  connectTimeoutMs: 1,
})

/**
 * @example
 * const store = new RedisStore({ url: process.env.REDIS_URL })
 * const throttle = createThrottle({ store })
 */
export class RedisStore implements ThrottleStore {
  readonly client: Redis
  readonly #prefix: string
  readonly #owned: boolean
  /** The time limit this store enforces itself: on a connection passed in only (ours has one). */
  readonly #limitMs: number | null
  #connecting: Promise<void> | null

  constructor(options: RedisStoreOptions = {}) {
    checkOptions('new RedisStore()', options, REDIS_OPTIONS)
    this.#prefix = options.prefix ?? 'fw:throttle:'
    this.#owned = options.client === undefined
    this.#limitMs = this.#owned ? null : (options.commandTimeoutMs ?? 500)
    this.client =
      options.client ??
      new Redis(
        options.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        clientOptions(options),
      )
    // Without a listener ioredis reports every failed reconnect as an unhandled 'error' event;
    // outages are logged by the middleware, once per outage.
    this.client.on('error', () => {})
    this.#connecting =
      this.client.status === 'ready'
        ? null
        : firstConnection(this.client, options.connectTimeoutMs ?? 1000)
    void this.#connecting?.then(() => (this.#connecting = null))
  }

  async hit(key: string, rule: ThrottleRule): Promise<ThrottleDecision> {
    if (this.#connecting) await this.#connecting
    let reply: number[]
    try {
      reply = (await this.#run(SCRIPT, SHA, this.#prefix + key, rule)) as number[]
    } catch (error) {
      throw new ThrottleStoreError(`Redis throttle check failed: ${(error as Error).message}`, {
        cause: error,
      })
    }
    const [allowed, remaining, newest, oldest, now] = reply as [
      number,
      number,
      number,
      number,
      number,
    ]
    return decide(allowed === 1, rule, now, oldest, newest, remaining, allowed === 1 ? newest : 0)
  }

  async peek(key: string, rule: ThrottleRule): Promise<ThrottleDecision | null> {
    if (this.#connecting) await this.#connecting
    const reply = await this.#run(PEEK_SCRIPT, PEEK_SHA, this.#prefix + key, rule)
    const [oldest, now] = reply as [number, number]
    return oldest === -1 ? null : decide(false, rule, now, oldest, now, 0, 0)
  }

  async release(key: string, _rule: ThrottleRule, stamp: number): Promise<void> {
    await this.#bounded(() => this.client.lrem(this.#prefix + key, 1, String(stamp)))
  }

  /** Closes the connection the store opened (not one passed in as `client`). */
  async close(): Promise<void> {
    if (!this.#owned) return
    if (this.client.status === 'ready')
      await this.client.quit().catch(() => this.client.disconnect())
    else this.client.disconnect()
  }

  #run(script: string, sha: string, key: string, rule: ThrottleRule): Promise<unknown> {
    return this.#bounded(() => this.#evaluate(script, sha, key, rule))
  }

  async #evaluate(script: string, sha: string, key: string, rule: ThrottleRule): Promise<unknown> {
    try {
      return await this.client.evalsha(sha, 1, key, rule.max, rule.windowMs)
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error
      return this.client.eval(script, 1, key, rule.max, rule.windowMs)
    }
  }

  /** `work`, or a rejection once it has taken longer than the store's own time limit. */
  #bounded<T>(start: () => Promise<T>): Promise<T> {
    const limitMs = this.#limitMs
    if (limitMs === null) return start()
    // A connection passed in queues commands while it is down (ioredis's offline queue) and sends
    // them when Redis is back: the checks that failed open during an outage were counted then,
    // and filled their clients' windows (429s for a whole window after the outage). Refused at
    // once instead, as on our own connection; 'wait' is a lazy connection the command opens.
    const status = this.client.status
    if (status !== 'ready' && status !== 'wait')
      return Promise.reject(new Error(`Redis connection is ${status}`))
    return within(start(), limitMs, `Command timed out after ${limitMs} ms`)
  }
}

function clientOptions(options: RedisStoreOptions): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 500,
    // A connection that stops answering (a half-open link, a host gone without a reset) is
    // dropped and made again; commandTimeout alone fails each check but keeps the dead socket.
    socketTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    // Reconnect quickly at first, then every 2 s at most, for as long as the process runs.
    retryStrategy: (times) => Math.min(times * 100, 2000),
    // A check that timed out was answered already (allowed, or a 503): sent again after the
    // reconnect, as ioredis does by default, it counted the request a second time.
    autoResendUnfulfilledCommands: false,
  }
}

/** Settles when the first connection is ready, fails, or takes longer than `timeoutMs`. */
function firstConnection(client: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      client.off('ready', done).off('error', done).off('end', done)
      resolve()
    }
    const timer = setTimeout(done, timeoutMs)
    timer.unref()
    client.once('ready', done).once('error', done).once('end', done)
  })
}
