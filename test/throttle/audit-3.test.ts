/**
 * Regressions of the third throttle audit: what a client saw when the memory store was flooded
 * after decoy counters were lined up, when the built-in request context was off, and when the
 * IPv6 prefix option was out of range.
 */
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
import { RedisStore } from '../../src/throttle/redis-store.js'
import { createThrottle, MemoryStore, type ThrottleStore } from '../../src/throttle/index.js'
import { cleanupProjects, makeProject } from '../support/project.js'
import { bundleServeFixture, httpGet, spawnServer } from './processes.js'
import { REDIS_URL, RUN_REDIS_TESTS, bootApp, call, deleteKeys } from './support.js'

const PREFIX = `fw:test:throttle-audit-3:${randomUUID()}:`
const redisStores: RedisStore[] = []

let bundled: string | undefined

afterAll(async () => {
  cleanupProjects()
  if (bundled) rmSync(bundled, { force: true })
  if (redisStores.length === 0) return
  await Promise.all(redisStores.map((store) => store.close()))
  await deleteKeys(REDIS_URL, PREFIX)
})

const TWO_PER_MINUTE = { max: 2, windowMs: 60_000 }

// The group allows 3 a minute; /g/a adds 2 an hour. Requests: b, a, a, then a again.
const STACKED = `export default (r) => {
  r.group({ prefix: '/g', name: 'g.', middleware: ['throttle:3,60'] }, (r) => {
    r.get('/a', () => ({ a: true }), 'a').withMiddleware('throttle:2,3600')
    r.get('/b', () => ({ b: true }), 'b')
  })
}`

async function refusedByTheGroup(store: ThrottleStore) {
  const { kernel } = await bootApp(STACKED, { store })
  const ip = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
  const statuses = []
  for (const path of ['/g/b', '/g/a', '/g/a'])
    statuses.push((await call(kernel, path, { ip })).status)
  expect(statuses).toEqual([200, 200, 200])
  return { kernel, ip, refused: await call(kernel, '/g/a', { ip }) }
}

// The group limit refused first, and its 429 said "retry in 60 s" although the route limit kept
// the request out for an hour: a client obeying Retry-After was refused again.
describe('a 429 from a group limit while the route limit keeps the request out longer', () => {
  it('reports the route limit and its wait, after which the request passes (memory)', async () => {
    let now = 1_700_000_000_000
    const { kernel, ip, refused } = await refusedByTheGroup(new MemoryStore({ clock: () => now }))
    expect(refused.status).toBe(429)
    expect(refused.header('retry-after')).toBe('3600')
    expect(refused.header('ratelimit-reset')).toBe('3600')
    expect(refused.header('x-ratelimit-reset')).toBe(String(1_700_000_000 + 3600))
    expect([refused.header('x-ratelimit-limit'), refused.header('x-ratelimit-remaining')]).toEqual([
      '2',
      '0',
    ])
    now += 60_000
    expect((await call(kernel, '/g/a', { ip })).status).toBe(429)
    now += 3_540_000
    expect((await call(kernel, '/g/a', { ip })).status).toBe(200)
  })

  it.runIf(RUN_REDIS_TESTS)('reports the route limit and its wait (Redis)', async () => {
    const store = new RedisStore({ url: REDIS_URL, prefix: PREFIX })
    redisStores.push(store)
    const { refused } = await refusedByTheGroup(store)
    expect(refused.status).toBe(429)
    expect(Number(refused.header('retry-after'))).toBeGreaterThan(3500)
    expect(refused.header('ratelimit-reset')).toBe(refused.header('retry-after'))
    expect(refused.header('x-ratelimit-limit')).toBe('2')
  })

  it('reports the route limit and its wait across --workers (the primary holds the counters)', async () => {
    const dir = makeProject({ 'routes.mjs': STACKED })
    await buildCache({ routesFile: join(dir, 'routes.mjs'), cacheDir: join(dir, 'cache') })
    bundled = await bundleServeFixture()
    const server = await spawnServer(bundled, {
      ROUTES_FILE: join(dir, 'routes.mjs'),
      CACHE_DIR: join(dir, 'cache'),
      WORKERS: '2',
      REDIS_URL: '',
      PORT: '0',
    })
    try {
      const statuses = []
      for (const path of ['/g/b', '/g/a', '/g/a'])
        statuses.push((await httpGet(server.port, path)).status)
      expect(statuses).toEqual([200, 200, 200])
      const refused = await httpGet(server.port, '/g/a')
      expect(refused.status).toBe(429)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500)
      expect(refused.headers['x-ratelimit-limit']).toBe('2')
    } finally {
      await server.stop()
    }
  })

  it('keeps the group limit in the 429 when it is the one that keeps the request out longer', async () => {
    const routes = STACKED.replace("'throttle:2,3600'", "'throttle:2,10'")
    let now = 1_700_000_000_000
    const { kernel } = await bootApp(routes, { store: new MemoryStore({ clock: () => now }) })
    for (const path of ['/g/b', '/g/a', '/g/a']) expect((await call(kernel, path)).status).toBe(200)
    const refused = await call(kernel, '/g/a')
    expect([refused.status, refused.header('retry-after')]).toEqual([429, '60'])
    expect(refused.header('x-ratelimit-limit')).toBe('3')
  })
})

describe('MemoryStore eviction under a flood of new keys', () => {
  // Eviction passed over at most 8 refusing counters and then took the next one anyway: an
  // attacker who exhausted 8 decoy keys and touched them just before its own exhausted counter
  // had that counter evicted by one storeful of new keys, and got a fresh budget.
  it('keeps an exhausted counter even when exhausted decoys are lined up before it', () => {
    const store = new MemoryStore({ maxKeys: 30, clock: () => 1_700_000_000_000 })
    const allowed = (key: string): boolean => store.hit(key, TWO_PER_MINUTE).allowed
    for (let i = 0; i < 30; i++) allowed(`bystander-${i}`)
    for (let d = 0; d < 8; d++) for (let i = 0; i < 3; i++) allowed(`decoy-${d}`)
    for (let i = 0; i < 3; i++) allowed('attacker')
    for (let d = 0; d < 8; d++) allowed(`decoy-${d}`)
    allowed('attacker')
    for (let i = 0; i < 30; i++) allowed(`flood-${i}`)
    expect(store.size).toBe(30)
    expect(allowed('attacker')).toBe(false)
  })

  it('never forgets the counter it has just checked, even when every other one is refusing', () => {
    const store = new MemoryStore({ maxKeys: 5, clock: () => 1_700_000_000_000 })
    for (let i = 0; i < 5; i++) for (let j = 0; j < 3; j++) store.hit(`full-${i}`, TWO_PER_MINUTE)
    const decisions = [1, 2, 3].map(() => store.hit('newcomer', TWO_PER_MINUTE).allowed)
    expect(decisions).toEqual([true, true, false])
    expect(store.size).toBe(5)
  })
})

describe('the counting key without the built-in client_ip', () => {
  // With `builtins: false` there is no client_ip attribute, and every anonymous client was
  // counted as 'unknown': one client's requests refused everybody else's.
  it('counts each client by its own address when the kernel runs without builtins', async () => {
    const routes = `export default (r) => {
      r.get('/two', () => ({ ok: true }), { name: 'two', middleware: ['throttle:2,60'] })
    }`
    const { kernel } = await bootApp(routes, {}, { builtins: false })
    const first = []
    for (let i = 0; i < 3; i++) first.push((await call(kernel, '/two', { ip: '10.9.0.1' })).status)
    expect(first).toEqual([200, 200, 429])
    const other = await call(kernel, '/two', { ip: '10.9.0.2' })
    expect(other.status).toBe(200)
    expect(other.header('x-ratelimit-remaining')).toBe('1')
  })
})

describe('createThrottle options', () => {
  // A negative or fractional prefix bucketed every IPv6 client into one counter ('::/-1').
  it.each([-1, 129, 1.5, Number.NaN])('refuses ipv6Prefix %s', (prefix) => {
    expect(() => createThrottle({ ipv6Prefix: prefix })).toThrow(RangeError)
  })
})
