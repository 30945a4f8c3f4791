/**
 * Regressions of the sixth throttle audit: what a client saw when a route's throttle was an alias
 * the routes file registered (`r.alias('limit', 'throttle:2,60')`), when the app handed the Redis
 * store a connection of its own and Redis was down or silent, when a custom key function had no
 * key for a request, and what a careless `maxKeys` did to the memory store.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisStore } from '../../src/throttle/redis-store.js'
import { MemoryStore, type ThrottleStore } from '../../src/throttle/index.js'
import { cleanupProjects } from '../support/project.js'
import { REDIS_URL, RUN_REDIS_TESTS, bootApp, call, deleteKeys, freePort } from './support.js'

const PREFIX = `fw:test:throttle-audit-6:${randomUUID()}:`
const clients: Redis[] = []
const stores: RedisStore[] = []
let silent: Server
let silentPort = 0

beforeAll(async () => {
  // Accepts connections and never answers: a Redis that hangs.
  silent = createServer((socket) => socket.on('data', () => {}))
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done))
  silentPort = (silent.address() as { port: number }).port
})

afterAll(async () => {
  cleanupProjects()
  await Promise.all(stores.map((store) => store.close()))
  for (const client of clients) client.disconnect()
  silent.close()
  if (RUN_REDIS_TESTS) await deleteKeys(REDIS_URL, PREFIX)
})

/** An ioredis connection as an app makes one: every option left at its default. */
function appClient(url: string): Redis {
  const client = new Redis(url)
  client.on('error', () => {})
  clients.push(client)
  return client
}

function redisStore(options: ConstructorParameters<typeof RedisStore>[0]): RedisStore {
  const store = new RedisStore({ prefix: PREFIX, ...options })
  stores.push(store)
  return store
}

/** A client address of this run (counters in Redis outlive it). */
function freshIp(): string {
  return `198.19.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
}

async function statuses(
  kernel: Awaited<ReturnType<typeof bootApp>>['kernel'],
  paths: string[],
  ip: string,
) {
  const seen = []
  for (const path of paths) seen.push((await call(kernel, path, { ip })).status)
  return seen
}

const ALIASED = `export default (r) => {
  r.alias('limit', 'throttle:2,60')
  r.get('/b', () => ({ b: true }), { name: 'b', middleware: ['limit'] })
  r.get('/c', () => ({ c: true }), { name: 'c', middleware: ['limit'] })
  r.get('/one', () => ({ one: true }), { name: 'one', middleware: ['limit:1,60'] })
  r.group({ prefix: '/g', name: 'g.', middleware: ['limit'] }, (r) => {
    r.get('/x', () => ({ x: true }), { name: 'x', middleware: ['throttle:5,60'] })
    r.get('/y', () => ({ y: true }), 'y')
  })
  r.group({ prefix: '/h', name: 'h.', middleware: ['throttle:3,60'] }, (r) => {
    r.get('/slow', () => ({ slow: true }), { name: 'slow', middleware: ['limit:2,3600'] })
    r.get('/fast', () => ({ fast: true }), 'fast')
  })
}`

// The layer scope did not know `limit` was a throttle: /b's and /c's layers both took the
// post-global scope (one counter for every route using `limit`), and the group's `limit` took
// the scope of the route's own `throttle:5,60` on /g/x, so the group limit was not shared.
describe('a throttle used through an alias of the routes file', () => {
  it('gives each route using it on its own a counter of its own', async () => {
    const { kernel } = await bootApp(ALIASED)
    const ip = freshIp()
    expect(await statuses(kernel, ['/b', '/b', '/c', '/c', '/b'], ip)).toEqual([
      200, 200, 200, 200, 429,
    ])
    expect(await statuses(kernel, ['/one', '/one'], ip)).toEqual([200, 429])
  })

  it("gives a group's alias one counter for all the group's routes", async () => {
    const { kernel } = await bootApp(ALIASED)
    const ip = freshIp()
    expect(await statuses(kernel, ['/g/x', '/g/y', '/g/x', '/g/y'], ip)).toEqual([
      200, 200, 429, 429,
    ])
    const refused = await call(kernel, '/g/y', { ip })
    expect(refused.header('x-ratelimit-limit')).toBe('2')
  })

  it("reports an aliased route limit's longer wait in the group's 429", async () => {
    let now = 1_700_000_000_000
    const { kernel } = await bootApp(ALIASED, { store: new MemoryStore({ clock: () => now }) })
    const ip = freshIp()
    expect(await statuses(kernel, ['/h/fast', '/h/slow', '/h/slow'], ip)).toEqual([200, 200, 200])
    // The group (3 a minute) refuses first; the route's alias (2 an hour) keeps it out longer.
    const refused = await call(kernel, '/h/slow', { ip })
    expect(refused.status).toBe(429)
    expect([refused.header('retry-after'), refused.header('x-ratelimit-limit')]).toEqual([
      '3600',
      '2',
    ])
    now += 60_000
    expect((await call(kernel, '/h/slow', { ip })).status).toBe(429)
    now += 3_540_000
    expect((await call(kernel, '/h/slow', { ip })).status).toBe(200)
  })

  it.runIf(RUN_REDIS_TESTS)('keeps one Redis counter per route and one per group', async () => {
    const store = redisStore({ url: REDIS_URL })
    const { kernel } = await bootApp(ALIASED, { store })
    const ip = freshIp()
    expect(await statuses(kernel, ['/b', '/c', '/g/x', '/g/y', '/g/x'], ip)).toEqual([
      200, 200, 200, 200, 429,
    ])
    const admin = appClient(REDIS_URL)
    const keys = (await admin.keys(`${PREFIX}*${ip}`)).map((key) => key.slice(PREFIX.length))
    expect(keys.map((key) => key.replace(/\|ip:.*/, '')).sort()).toEqual(
      ['r0:b|2,60', 'r0:c|2,60', expect.stringMatching(/^g\d+\.0\|2,60$/), 'r1:g.x|5,60'].sort(),
    )
  })
})

// With the app's own connection (ioredis defaults: offline queue, 20 retries, no command
// timeout) a request waited as long as Redis was silent, and ~20 reconnects when it was down.
describe('a Redis store on a connection the app made', () => {
  const ROUTES = `export default (r) => {
    r.get('/five', () => ({ ok: true }), { name: 'five', middleware: ['throttle:5,60'] })
  }`

  it('fails open on a Redis that never answers, with a warning', { timeout: 5000 }, async () => {
    const store = redisStore({ client: appClient(`redis://127.0.0.1:${silentPort}`) })
    const { kernel, log } = await bootApp(ROUTES, { store })
    const response = await call(kernel, '/five')
    expect(response.status).toBe(200)
    expect(response.header('x-ratelimit-limit')).toBeUndefined()
    expect(log.lines.filter((l) => /Throttle store unreachable/.test(l.msg))).toHaveLength(1)
  })

  it('answers 503 on a Redis that is down when failing closed', { timeout: 5000 }, async () => {
    const store = redisStore({ client: appClient(`redis://127.0.0.1:${await freePort()}`) })
    const { kernel } = await bootApp(ROUTES, { store, failOpen: false })
    const response = await call(kernel, '/five')
    expect([response.status, response.header('retry-after')]).toEqual([503, '5'])
  })

  it.runIf(RUN_REDIS_TESTS)('still counts when Redis answers', async () => {
    const store = redisStore({ client: appClient(REDIS_URL) })
    const { kernel } = await bootApp(ROUTES, { store })
    const ip = freshIp()
    const seen = await statuses(kernel, Array(6).fill('/five'), ip)
    expect(seen).toEqual([200, 200, 200, 200, 200, 429])
  })
})

// `keyFn: (r) => r.getHeaderLine('x-api-key')` answers '' without the header: every client
// without a key shared the counter `k:`, and one of them could exhaust it for all.
describe('a custom key function with no key for a request', () => {
  const ROUTES = `export default (r) => {
    r.get('/one', () => ({ ok: true }), { name: 'one', middleware: ['throttle:1,60'] })
  }`

  it('counts a request whose key is empty by its client, as with no key function', async () => {
    const store: ThrottleStore = new MemoryStore()
    const { kernel } = await bootApp(ROUTES, {
      store,
      keyFn: (request) => request.getHeaderLine('x-api-key'),
    })
    expect((await call(kernel, '/one', { ip: '10.6.0.1' })).status).toBe(200)
    expect((await call(kernel, '/one', { ip: '10.6.0.2' })).status).toBe(200)
    expect((await call(kernel, '/one', { ip: '10.6.0.1' })).status).toBe(429)
    const keyed = { headers: { 'x-api-key': 'abc' } }
    expect((await call(kernel, '/one', { ip: '10.6.0.3', ...keyed })).status).toBe(200)
    expect((await call(kernel, '/one', { ip: '10.6.0.4', ...keyed })).status).toBe(429)
  })
})

// `maxKeys: Number(process.env.THROTTLE_KEYS)` with the variable unset is NaN, and no size is
// greater than NaN: the store never evicted and grew with every new client.
describe('MemoryStore maxKeys', () => {
  it.each([Number.NaN, 0, -5])('refuses %s', (maxKeys) => {
    expect(() => new MemoryStore({ maxKeys })).toThrow(RangeError)
  })

  it('still takes a bound and keeps to it', () => {
    const store = new MemoryStore({ maxKeys: 10 })
    for (let i = 0; i < 100; i++) store.hit(`ip:${i}`, { max: 5, windowMs: 60_000 })
    expect(store.size).toBe(10)
  })
})
