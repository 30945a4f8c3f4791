/**
 * The Redis store against a real Redis (REDIS_URL, default 127.0.0.1:6379): exact under 50
 * concurrent checks, across two processes, the same window as the memory store (seeded with old
 * admissions instead of sleeping), and never a 500 or a hang when Redis is gone.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
import { RedisStore } from '../../src/throttle/redis-store.js'
import { cleanupProjects, makeProject } from '../support/project.js'
import { bundleServeFixture, httpGet, spawnServer } from './processes.js'
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  bootApp,
  burst,
  call,
  countOf,
  deleteKeys,
  freePort,
} from './support.js'

const PREFIX = `fw:test:throttle:${randomUUID()}:`
const FIVE_PER_MINUTE = { max: 5, windowMs: 60_000 }
const ROUTES = `export default (r) => {
  r.get('/five', () => ({ pid: process.pid }), { name: 'five', middleware: ['throttle:5,60'] })
}
`

let admin: Redis
const stores: RedisStore[] = []

function store(options: ConstructorParameters<typeof RedisStore>[0] = {}): RedisStore {
  const made = new RedisStore({ url: REDIS_URL, prefix: PREFIX, ...options })
  stores.push(made)
  return made
}

/** Redis's clock, in ms. */
async function serverNow(): Promise<number> {
  const [seconds, micros] = await admin.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

describe.runIf(RUN_REDIS_TESTS)('RedisStore', () => {
  beforeAll(() => {
    admin = new Redis(REDIS_URL)
  })

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()))
    await deleteKeys(REDIS_URL, PREFIX)
    admin?.disconnect()
    cleanupProjects()
  })

  it('50 concurrent checks against 5/60 → exactly 5 pass', async () => {
    const redis = store()
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => redis.hit('burst', FIVE_PER_MINUTE)),
    )
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5)
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4])
    const refused = decisions.find((d) => !d.allowed)!
    expect(refused.remaining).toBe(0)
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(59)
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60)
  })

  it('expires the counter with its window', async () => {
    const redis = store()
    await redis.hit('ttl', FIVE_PER_MINUTE)
    const ttl = await admin.pttl(`${PREFIX}ttl`)
    expect(ttl).toBeGreaterThan(59_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('drops admissions older than the window and counts the younger ones (server clock)', async () => {
    const redis = store()
    const now = await serverNow()
    // Newest first, as the script keeps them: two 30 s old, three just out of the window.
    await admin.rpush(
      `${PREFIX}window`,
      now - 30_000,
      now - 30_000,
      now - 60_000,
      now - 61_000,
      now - 70_000,
    )
    const first = await redis.hit('window', FIVE_PER_MINUTE)
    expect(first).toMatchObject({ allowed: true, remaining: 2 })
    expect(await admin.llen(`${PREFIX}window`)).toBe(3)
    await redis.hit('window', FIVE_PER_MINUTE)
    await redis.hit('window', FIVE_PER_MINUTE)
    const refused = await redis.hit('window', FIVE_PER_MINUTE)
    expect(refused.allowed).toBe(false)
    // The oldest live admission (30 s ago) frees the next slot in ~30 s.
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(29)
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(31)
    // Every reset of a refusal names that same instant (Redis's clock moved on a little since `now`).
    expect(refused.resetAfterSeconds).toBe(refused.retryAfterSeconds)
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(
      Math.floor(now / 1000) + refused.retryAfterSeconds,
    )
    expect(refused.resetSeconds).toBeLessThanOrEqual(
      Math.floor(now / 1000) + refused.retryAfterSeconds + 1,
    )
  })

  it('gives a released admission back', async () => {
    const redis = store()
    const one = { max: 1, windowMs: 60_000 }
    const first = await redis.hit('release', one)
    expect((await redis.hit('release', one)).allowed).toBe(false)
    await redis.release('release', one, first.stamp)
    expect((await redis.hit('release', one)).allowed).toBe(true)
  })

  it('falls back to EVAL when the script is not cached (NOSCRIPT)', async () => {
    const client = new Redis(REDIS_URL)
    let evalshaCalls = 0
    client.evalsha = (async () => {
      evalshaCalls++
      throw new Error('NOSCRIPT No matching script. Please use EVAL.')
    }) as unknown as Redis['evalsha']
    const redis = new RedisStore({ client, prefix: PREFIX })
    expect((await redis.hit('noscript', FIVE_PER_MINUTE)).allowed).toBe(true)
    expect(evalshaCalls).toBe(1)
    await redis.close() // leaves a client passed in open
    expect(client.status).toBe('ready')
    client.disconnect()
  })

  it('enforces the limit through the middleware: 50 concurrent requests → exactly 5 pass', async () => {
    const { kernel } = await bootApp(ROUTES, { store: store() })
    const statuses = await burst(kernel, '/five', 50)
    expect(countOf(statuses, 200)).toBe(5)
    const refused = await call(kernel, '/five')
    expect(refused.status).toBe(429)
    expect(refused.header('x-ratelimit-remaining')).toBe('0')
    expect(Number(refused.header('retry-after'))).toBeGreaterThanOrEqual(1)
  })

  it('two server processes sharing Redis let exactly 5 of 50 concurrent requests through', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const routesFile = join(dir, 'routes.mjs')
    await buildCache({ routesFile, cacheDir: join(dir, 'cache') })
    const script = await bundleServeFixture()
    onTestFinished(() => rmSync(script, { force: true }))
    const env = {
      ROUTES_FILE: routesFile,
      CACHE_DIR: join(dir, 'cache'),
      REDIS_URL,
      THROTTLE_PREFIX: `${PREFIX}procs:`,
    }
    const servers = await Promise.all([spawnServer(script, env), spawnServer(script, env)])
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => httpGet(servers[i % 2]!.port, '/five')),
      )
      expect(
        countOf(
          answers.map((a) => a.status),
          200,
        ),
      ).toBe(5)
      expect(
        countOf(
          answers.map((a) => a.status),
          429,
        ),
      ).toBe(45)
      expect(new Set(answers.map((a) => a.headers['x-pid'])).size).toBe(2)
      for (const server of servers) expect((await httpGet(server.port, '/five')).status).toBe(429)
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
  })
})

describe.runIf(RUN_REDIS_TESTS)('RedisStore when Redis is unreachable', () => {
  let blackhole: Server
  let silentPort: number

  beforeAll(async () => {
    // Accepts connections and never answers: a hung Redis.
    blackhole = createServer(() => {}).listen(0, '127.0.0.1')
    await new Promise((resolve) => blackhole.once('listening', resolve))
    silentPort = (blackhole.address() as { port: number }).port
  })

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()))
    blackhole.close()
    cleanupProjects()
  })

  it('rejects with ThrottleStoreError on a closed port, at once (not by a timeout)', async () => {
    const redis = store({ url: `redis://127.0.0.1:${await freePort()}` })
    // Refused, not queued until the connect (1 s) or command (500 ms) timeout gives up.
    const refused = {
      name: 'ThrottleStoreError',
      message: expect.not.stringMatching(/timed? ?out/i),
    }
    await expect(redis.hit('x', FIVE_PER_MINUTE)).rejects.toMatchObject(refused)
    await expect(redis.hit('x', FIVE_PER_MINUTE)).rejects.toMatchObject(refused)
  })

  it('fails open by default: requests pass without rate-limit headers, one warning per outage', async () => {
    const redis = store({ url: `redis://127.0.0.1:${await freePort()}` })
    const { kernel, log } = await bootApp(ROUTES, { store: redis })
    const statuses = await burst(kernel, '/five', 10)
    expect(statuses).toEqual(Array(10).fill(200))
    const response = await call(kernel, '/five')
    expect(response.status).toBe(200)
    expect(response.header('x-ratelimit-limit')).toBeUndefined()
    expect(
      log.lines.filter((l) => l.level === 'warn' && /Throttle store unreachable/.test(l.msg)),
    ).toHaveLength(1)
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([])
  })

  it('fails closed with 503 when configured, never 500', async () => {
    const redis = store({ url: `redis://127.0.0.1:${await freePort()}` })
    const { kernel } = await bootApp(ROUTES, { store: redis, failOpen: false })
    const response = await call(kernel, '/five')
    expect(response.status).toBe(503)
    expect(response.header('retry-after')).toBe('5')
  })

  it('does not hang on a Redis that accepts connections but never answers', async () => {
    const redis = store({
      url: `redis://127.0.0.1:${silentPort}`,
      commandTimeoutMs: 200,
      connectTimeoutMs: 300,
    })
    const { kernel } = await bootApp(ROUTES, { store: redis })
    // Without its timeouts each request would wait for as long as the connection lived.
    const statuses = await burst(kernel, '/five', 5)
    expect(statuses).toEqual(Array(5).fill(200))
  })
})

describe('the Redis test gate', () => {
  // The gate evaluated afresh, with Redis down (nothing listens on port 1): it runs the Redis
  // tests (to fail) under CI=true, and skips them only outside CI.
  it.each([
    ['true', true],
    ['', false],
  ])('with Redis down and CI=%j, runs the Redis tests: %s', async (ci, runs) => {
    vi.stubEnv('CI', ci)
    vi.stubEnv('REDIS_URL', 'redis://127.0.0.1:1')
    vi.resetModules()
    try {
      const gate = await import('./support.js')
      expect(gate.RUN_REDIS_TESTS).toBe(runs)
    } finally {
      vi.unstubAllEnvs()
      vi.resetModules()
    }
  })
})
