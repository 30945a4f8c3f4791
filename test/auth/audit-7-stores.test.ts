/**
 * Regressions of the seventh audit of the shared stores, against a real Redis (REDIS_URL) seen
 * through a TCP proxy of the test's own that can go silent: its connections stay open and answer
 * nothing (a half-open link, a host gone without a reset). Once Redis answers again, the
 * revocation list and the throttle recover without a restart, and closing never fails.
 */
import { randomUUID } from 'node:crypto'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { createAuth, createUser, type Auth } from '../../src/auth/auth.js'
import { connectRedisRevocations } from '../../src/auth/revocation.js'
import { RedisStore } from '../../src/throttle/redis-store.js'
import { cleanupProjects } from '../support/project.js'
import { bootApp, call, deleteKeys } from '../throttle/support.js'
import { IN_CI, reachable, REDIS_URL, SECRET, send, serveAuthApp, type AuthApp } from './support.js'

const PREFIX = `fw:test:audit7:${randomUUID()}:`
const PASSWORD = 'correct horse battery'
const RUN = IN_CI || (await reachable(REDIS_URL))

/** A TCP proxy in front of Redis. `silence()`: every connection, open or new, answers nothing. */
class SilentProxy {
  readonly #server: Server
  readonly #clients = new Set<Socket>()
  #silent = false

  constructor() {
    const target = new URL(REDIS_URL)
    this.#server = createServer((client) => {
      this.#clients.add(client)
      client.on('error', () => {}).on('close', () => this.#clients.delete(client))
      if (this.#silent) return void client.resume()
      const upstream = connect(Number(target.port || 6379), target.hostname)
      upstream.on('error', () => client.destroy()).on('close', () => client.destroy())
      client.on('close', () => upstream.destroy())
      client.pipe(upstream).pipe(client)
      client.once('silence', () => {
        client.unpipe(upstream).resume()
        upstream.unpipe(client).resume()
      })
    })
  }

  /** REDIS_URL (its database, its password) with the proxy's address. */
  async url(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    const url = new URL(REDIS_URL)
    url.hostname = '127.0.0.1'
    url.port = String((this.#server.address() as AddressInfo).port)
    return url.href
  }

  get open(): number {
    return this.#clients.size
  }

  silence(): void {
    this.#silent = true
    for (const client of this.#clients) client.emit('silence')
  }

  /** New connections reach Redis again; the silenced ones stay silent. */
  speak(): void {
    this.#silent = false
  }

  async close(): Promise<void> {
    for (const client of this.#clients) client.destroy()
    await new Promise((resolve) => this.#server.close(resolve))
  }
}

/** Calls `attempt` every 100 ms until it resolves to `wanted` or `ms` have passed; the last value. */
async function poll<T>(attempt: () => Promise<T>, wanted: T, ms: number): Promise<T> {
  const until = Date.now() + ms
  let last = await attempt()
  while (last !== wanted && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    last = await attempt()
  }
  return last
}

const proxies: SilentProxy[] = []
async function proxy(): Promise<{ proxy: SilentProxy; url: string }> {
  const made = new SilentProxy()
  proxies.push(made)
  return { proxy: made, url: await made.url() }
}

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()))
  if (RUN) await deleteKeys(REDIS_URL, PREFIX)
  cleanupProjects()
})

describe.runIf(RUN)('a Redis connection that goes silent, then Redis answers again', () => {
  let auth: Auth | undefined
  let app: AuthApp | undefined

  afterAll(async () => {
    await app?.close()
    await auth?.close()
  })

  it('revocation checks answer 503, then 200 again without a restart (regression: 503 for good)', async () => {
    const { proxy: redis, url } = await proxy()
    auth = createAuth({
      secret: SECRET,
      production: false,
      database: 'sqlite::memory:',
      revocations: await connectRedisRevocations(url, { prefix: PREFIX }),
    })
    app = await serveAuthApp(auth)
    await createUser(auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
    const login = await send(app, 'POST', '/auth/login', {
      json: { email: 'ada@example.com', password: PASSWORD },
    })
    const token = login.body.token as string
    const me = async (): Promise<number> => (await send(app!, 'GET', '/auth/me', { token })).status
    expect(await me()).toBe(200)

    redis.silence()
    // Answered while the connection is still open and silent (no command timeout: never).
    expect(await me()).toBe(503)

    redis.speak()
    expect(await poll(me, 200, 5000)).toBe(200)
    expect(redis.open).toBe(1) // the silent connection was dropped, not kept beside the new one
    expect((await send(app, 'POST', '/auth/logout', { token, json: {} })).status).toBe(204)
    expect(await me()).toBe(401)
  }, 15_000)

  it('the throttle counts again after failing open (regression: unthrottled for good)', async () => {
    const { proxy: redis, url } = await proxy()
    const store = new RedisStore({ url, prefix: PREFIX })
    const { kernel } = await bootApp(
      `export default (r) => { r.get('/two', () => ({}), { name: 'two', middleware: ['throttle:2,60'] }) }`,
      { store },
    )
    const status = async (): Promise<number> => (await call(kernel, '/two')).status
    try {
      expect([await status(), await status(), await status()]).toEqual([200, 200, 429])
      redis.silence()
      expect(await status()).toBe(200) // fails open, as documented
      redis.speak()
      expect(await poll(status, 429, 5000)).toBe(429)
    } finally {
      await store.close()
    }
  }, 15_000)

  it('closing the revocation list while Redis is silent resolves (regression: fw serve exited 1)', async () => {
    const { proxy: redis, url } = await proxy()
    const list = await connectRedisRevocations(url, { prefix: PREFIX })
    expect(await list.isRevoked(randomUUID())).toBe(false)
    redis.silence()
    await expect(list.close()).resolves.toBeUndefined()
    expect(await poll(async () => redis.open, 0, 1000)).toBe(0)
  })
})
