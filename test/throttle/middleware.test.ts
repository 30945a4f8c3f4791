/**
 * The throttle middleware through the real kernel (compiled routes, error boundary): headers on
 * success and on 429, stacking of group and route limits, the counting key, store outages.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { Middleware } from '../../src/runtime/types.js'
import { MemoryStore, ThrottleStoreError, type ThrottleStore } from '../../src/throttle/index.js'
import { cleanupProjects } from '../support/project.js'
import { bootApp, burst, call, countOf } from './support.js'

afterAll(() => cleanupProjects())

const ROUTES = `
export default (r) => {
  r.group({ prefix: '/g', name: 'g.', middleware: ['throttle:10,60'] }, (r) => {
    r.get('/a', () => ({ a: true }), 'a').withMiddleware('throttle:3,60')
    r.get('/b', () => ({ b: true }), 'b')
    r.get('/c', () => ({ c: true }))
  })
  r.get('/five', () => ({ ok: true }), { name: 'five', middleware: ['throttle:5,60'] })
  r.get('/five-too', () => ({ ok: true }), { name: 'five-too', middleware: ['throttle:5,60'] })
  r.get('/default', () => ({ ok: true }), { name: 'default', middleware: ['throttle'] })
  r.get('/me', () => ({ ok: true }), { name: 'me', middleware: ['auth', 'throttle:2,60'] })
  r.get('/plain', () => ({ ok: true }), 'plain')
}
`

describe('throttle:5,60 through the kernel', () => {
  it('lets requests 1–5 through with X-RateLimit-*, RateLimit-* and Server-Timing, and answers the 6th with 429', async () => {
    const { kernel } = await bootApp(ROUTES)
    const before = Math.floor(Date.now() / 1000)
    const responses = []
    for (let i = 0; i < 6; i++) responses.push(await call(kernel, '/five'))
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429])
    expect(responses.map((r) => r.header('x-ratelimit-remaining'))).toEqual([
      '4',
      '3',
      '2',
      '1',
      '0',
      '0',
    ])
    const ok = responses[0]!
    expect(ok.header('x-ratelimit-limit')).toBe('5')
    expect(Number(ok.header('x-ratelimit-reset'))).toBeGreaterThanOrEqual(before + 60)
    expect(Number(ok.header('x-ratelimit-reset'))).toBeLessThanOrEqual(before + 62)
    expect(ok.header('server-timing')).toMatch(/^throttle;dur=\d+(\.\d+)?$/)
    expect([
      ok.header('ratelimit-limit'),
      ok.header('ratelimit-remaining'),
      ok.header('ratelimit-reset'),
    ]).toEqual(['5', '4', '60'])

    const limited = responses[5]!
    expect(JSON.parse(String(limited.body))).toMatchObject({ error: 'Too Many Requests' })
    expect(Number(limited.header('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(limited.header('retry-after'))).toBeLessThanOrEqual(60)
    expect(limited.header('x-ratelimit-limit')).toBe('5')
    expect(limited.header('x-ratelimit-remaining')).toBe('0')
    expect(Number(limited.header('x-ratelimit-reset'))).toBeGreaterThanOrEqual(before + 60)
    expect(limited.header('server-timing')).toMatch(/^throttle;dur=/)
    expect(limited.header('ratelimit-remaining')).toBe('0')
    expect(Number(limited.header('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
    expect(Number(limited.header('ratelimit-reset'))).toBeLessThanOrEqual(60)
  })

  it('50 concurrent requests → exactly 5 pass', async () => {
    const { kernel } = await bootApp(ROUTES)
    const statuses = await burst(kernel, '/five', 50)
    expect(countOf(statuses, 200)).toBe(5)
    expect(countOf(statuses, 429)).toBe(45)
  })

  it('counts two routes with the same route-level alias separately', async () => {
    const { kernel } = await bootApp(ROUTES)
    expect(countOf(await burst(kernel, '/five', 8), 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five-too', 8), 200)).toBe(5)
  })

  it('defaults to 60 per 60 seconds for a bare `throttle`', async () => {
    const { kernel } = await bootApp(ROUTES)
    const first = await call(kernel, '/default')
    expect(first.header('x-ratelimit-limit')).toBe('60')
    expect(countOf(await burst(kernel, '/default', 70), 200)).toBe(59)
  })

  it('leaves routes without a throttle alone', async () => {
    const { kernel } = await bootApp(ROUTES)
    const response = await call(kernel, '/plain')
    expect(response.status).toBe(200)
    expect(response.header('x-ratelimit-limit')).toBeUndefined()
    expect(response.header('server-timing')).toBeUndefined()
  })
})

describe('stacked group and route limits', () => {
  it('limits route A at 3 and A+B together at 10, counting no request twice', async () => {
    const { kernel } = await bootApp(ROUTES)
    const a = await burst(kernel, '/g/a', 6)
    expect(countOf(a, 200)).toBe(3)
    // The 3 refused requests to A gave their group slot back: 7 of 10 remain for the group.
    const b = await burst(kernel, '/g/b', 12)
    expect(countOf(b, 200)).toBe(7)
    expect(countOf(await burst(kernel, '/g/c', 2), 200)).toBe(0)
    expect(countOf(await burst(kernel, '/g/a', 2), 200)).toBe(0)
  })

  it('shares the group counter across routes in any order', async () => {
    const { kernel } = await bootApp(ROUTES)
    expect(countOf(await burst(kernel, '/g/b', 8), 200)).toBe(8)
    // The group has 2 left; A's own limit (3) is not the binding one now.
    expect(countOf(await burst(kernel, '/g/a', 5), 200)).toBe(2)
    expect(countOf(await burst(kernel, '/g/c', 1), 200)).toBe(0)
  })

  it('reports the limit closest to exhaustion', async () => {
    const { kernel } = await bootApp(ROUTES)
    const first = await call(kernel, '/g/a')
    expect([first.header('x-ratelimit-limit'), first.header('x-ratelimit-remaining')]).toEqual([
      '3',
      '2',
    ])
    await burst(kernel, '/g/b', 8) // group: 9 used, 1 left; route A: 1 used, 2 left
    const tight = await call(kernel, '/g/a')
    expect([tight.header('x-ratelimit-limit'), tight.header('x-ratelimit-remaining')]).toEqual([
      '10',
      '0',
    ])
    const refused = await call(kernel, '/g/a')
    expect(refused.status).toBe(429)
    expect([refused.header('x-ratelimit-limit'), refused.header('x-ratelimit-remaining')]).toEqual([
      '10',
      '0',
    ])
    expect(refused.header('server-timing')).toMatch(/^throttle;dur=/)
  })

  it('refuses by the route limit with the route limit in the 429 headers', async () => {
    const { kernel } = await bootApp(ROUTES)
    await burst(kernel, '/g/a', 3)
    const refused = await call(kernel, '/g/a')
    expect(refused.status).toBe(429)
    expect(refused.header('x-ratelimit-limit')).toBe('3')
    expect(refused.header('server-timing')?.match(/throttle;dur=/g)).toHaveLength(1)
  })

  it('applies a pre-global throttle to every route as one counter', async () => {
    const { kernel } = await bootApp(ROUTES, {}, { preGlobal: ['throttle:4,60'] })
    const statuses = [
      ...(await burst(kernel, '/plain', 2)),
      ...(await burst(kernel, '/g/b', 2)),
      ...(await burst(kernel, '/five', 2)),
    ]
    expect(countOf(statuses, 200)).toBe(4)
  })
})

describe('the counting key', () => {
  it('counts each client address separately', async () => {
    const { kernel } = await bootApp(ROUTES)
    expect(countOf(await burst(kernel, '/five', 6, { ip: '198.51.100.1' }), 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five', 6, { ip: '198.51.100.2' }), 200)).toBe(5)
  })

  it('buckets IPv6 clients by /64', async () => {
    const { kernel } = await bootApp(ROUTES)
    const statuses = [
      ...(await burst(kernel, '/five', 3, { ip: '2001:db8:1:2::1' })),
      ...(await burst(kernel, '/five', 3, { ip: '2001:db8:1:2:ffff::9' })),
    ]
    expect(countOf(statuses, 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five', 5, { ip: '2001:db8:1:3::1' }), 200)).toBe(5)
  })

  it('counts ::ffff:1.2.3.4 as 1.2.3.4, and each mapped address as its own client', async () => {
    const { kernel } = await bootApp(ROUTES)
    expect(countOf(await burst(kernel, '/five', 3, { ip: '::ffff:192.0.2.1' }), 200)).toBe(3)
    expect(countOf(await burst(kernel, '/five', 3, { ip: '192.0.2.1' }), 200)).toBe(2)
    expect(countOf(await burst(kernel, '/five', 5, { ip: '::ffff:192.0.2.2' }), 200)).toBe(5)
  })

  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const { kernel } = await bootApp(ROUTES)
    const spoofed = Array.from({ length: 8 }, (_, i) =>
      call(kernel, '/five', { ip: '198.51.100.7', headers: { 'x-forwarded-for': `10.0.0.${i}` } }),
    )
    const statuses = (await Promise.all(spoofed)).map((r) => r.status)
    expect(countOf(statuses, 200)).toBe(5)
  })

  it('honours X-Forwarded-For from a trusted proxy (loopback by default)', async () => {
    const { kernel } = await bootApp(ROUTES)
    const via = (client: string) => ({ ip: '127.0.0.1', headers: { 'x-forwarded-for': client } })
    expect(countOf(await burst(kernel, '/five', 6, via('198.51.100.20')), 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five', 6, via('198.51.100.21')), 200)).toBe(5)
  })

  it('counts an authenticated user by auth.user_id, whatever the address', async () => {
    const { kernel } = await bootApp(ROUTES)
    const statuses = [
      ...(await burst(kernel, '/me', 2, { ip: '198.51.100.1', headers: { 'x-user': '7' } })),
      ...(await burst(kernel, '/me', 2, { ip: '198.51.100.2', headers: { 'x-user': '7' } })),
    ]
    expect(countOf(statuses, 200)).toBe(2)
    expect(
      countOf(
        await burst(kernel, '/me', 3, { ip: '198.51.100.1', headers: { 'x-user': '8' } }),
        200,
      ),
    ).toBe(2)
    expect(countOf(await burst(kernel, '/me', 3, { ip: '198.51.100.1' }), 200)).toBe(2)
  })

  it('uses a custom key function, and keeps tenants apart', async () => {
    const { kernel } = await bootApp(ROUTES, {
      keyFn: (request) => request.getHeaderLine('x-api-key') || null,
      tenant: (request) => request.getHeaderLine('x-tenant'),
    })
    const key = (k: string, tenant = 'acme') => ({
      headers: { 'x-api-key': k, 'x-tenant': tenant },
    })
    const statuses = [
      ...(await burst(kernel, '/five', 3, { ip: '198.51.100.1', ...key('k1') })),
      ...(await burst(kernel, '/five', 3, { ip: '198.51.100.2', ...key('k1') })),
    ]
    expect(countOf(statuses, 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five', 6, key('k1', 'globex')), 200)).toBe(5)
    expect(countOf(await burst(kernel, '/five', 6, key('k2')), 200)).toBe(5)
  })

  it('reads the tenant from an attribute when given its name', async () => {
    const store = new MemoryStore()
    const keys: string[] = []
    const spy = {
      hit: (key: string, rule: { max: number; windowMs: number }) => (
        keys.push(key),
        store.hit(key, rule)
      ),
      release: store.release.bind(store),
    }
    const { kernel } = await bootApp(ROUTES, { store: spy, tenant: 'route.name' })
    await call(kernel, '/five', { ip: '::ffff:192.0.2.1' })
    expect(keys).toEqual(['r0:five|5,60|t:five|ip:192.0.2.1'])
  })
})

describe('standard headers', () => {
  it('leaves RateLimit-* out with standardHeaders: false', async () => {
    const { kernel } = await bootApp(ROUTES, { standardHeaders: false })
    const ok = await call(kernel, '/five')
    expect(ok.header('x-ratelimit-limit')).toBe('5')
    expect(ok.header('ratelimit-limit')).toBeUndefined()
  })

  it('adds RateLimit-Limit/-Remaining/-Reset with standardHeaders: true', async () => {
    const { kernel } = await bootApp(ROUTES, { standardHeaders: true })
    const ok = await call(kernel, '/five')
    expect(ok.header('ratelimit-limit')).toBe('5')
    expect(ok.header('ratelimit-remaining')).toBe('4')
    expect(ok.header('ratelimit-reset')).toBe('60')
    expect(ok.header('x-ratelimit-limit')).toBe('5')
    await burst(kernel, '/five', 4)
    const refused = await call(kernel, '/five')
    expect(refused.header('ratelimit-remaining')).toBe('0')
    expect(Number(refused.header('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
  })

  it("emits the IETF draft's RateLimit-Policy and RateLimit, one member per stacked limit", async () => {
    const { kernel } = await bootApp(ROUTES, { standardHeaders: 'draft-8' })
    const ok = await call(kernel, '/g/a')
    expect(ok.header('ratelimit-policy')).toBe('"group";q=10;w=60, "route";q=3;w=60')
    expect(ok.header('ratelimit')).toBe('"group";r=9;t=60, "route";r=2;t=60')
    expect(ok.header('ratelimit-limit')).toBeUndefined()
    await burst(kernel, '/g/a', 2)
    const refused = await call(kernel, '/g/a')
    expect(refused.status).toBe(429)
    expect(refused.header('ratelimit-policy')).toBe('"route";q=3;w=60')
    expect(refused.header('ratelimit')).toMatch(/^"route";r=0;t=\d+$/)
  })
})

/** A store whose backend can be switched off: hits throw ThrottleStoreError while `down`. */
function flakyStore(): ThrottleStore & { down: boolean } {
  const memory = new MemoryStore()
  return {
    down: false,
    hit(key, rule) {
      if (this.down) throw new ThrottleStoreError('connection refused')
      return memory.hit(key, rule)
    },
    release: (key, rule, stamp) => memory.release(key, rule, stamp),
  }
}

describe('when the store is unreachable', () => {
  it('fails open: serves the request, warns once per outage, and says when the store is back', async () => {
    const store = flakyStore()
    const { kernel, log } = await bootApp(ROUTES, { store })
    store.down = true
    expect(await burst(kernel, '/five', 20)).toEqual(Array(20).fill(200))
    const warnings = () => log.lines.filter((l) => l.level === 'warn')
    expect(warnings()).toHaveLength(1)
    expect(warnings()[0]!.msg).toMatch(/Throttle store unreachable.*fail open/)
    store.down = false
    expect((await call(kernel, '/five')).header('x-ratelimit-remaining')).toBe('4')
    expect(
      log.lines.filter((l) => l.level === 'info' && /reachable again/.test(l.msg)),
    ).toHaveLength(1)
    store.down = true
    await call(kernel, '/five')
    expect(warnings()).toHaveLength(2)
  })

  it('repeats the warning during a long outage only after warnEverySeconds', async () => {
    const store = flakyStore()
    const { kernel, log } = await bootApp(ROUTES, { store, warnEverySeconds: 0 })
    store.down = true
    await burst(kernel, '/five', 3)
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(3)
  })

  it('fails closed with 503 and Retry-After when failOpen is false', async () => {
    const store = flakyStore()
    const { kernel, log } = await bootApp(ROUTES, { store, failOpen: false })
    store.down = true
    const response = await call(kernel, '/five')
    expect(response.status).toBe(503)
    expect(response.header('retry-after')).toBe('5')
    expect(log.lines.find((l) => l.level === 'warn')?.msg).toMatch(/fail closed/)
  })

  it('turns any store failure into fail-open or 503, never a 500', async () => {
    const broken: ThrottleStore = {
      hit: () => Promise.reject(new TypeError('bug in a custom store')),
      release: () => undefined,
    }
    const open = await bootApp(ROUTES, { store: broken })
    expect((await call(open.kernel, '/five')).status).toBe(200)
    const closed = await bootApp(ROUTES, { store: broken, failOpen: false })
    expect((await call(closed.kernel, '/five')).status).toBe(503)
  })

  it('gives the group slot back when a stacked limit fails closed', async () => {
    const memory = new MemoryStore()
    const store: ThrottleStore = {
      hit: (key, rule) => {
        if (rule.max === 3) throw new ThrottleStoreError('down for route limits')
        return memory.hit(key, rule)
      },
      release: (key, rule, stamp) => memory.release(key, rule, stamp),
    }
    const { kernel } = await bootApp(ROUTES, { store, failOpen: false })
    expect(countOf(await burst(kernel, '/g/a', 4), 503)).toBe(4)
    expect(countOf(await burst(kernel, '/g/b', 12), 200)).toBe(10)
  })
})

describe('Server-Timing', () => {
  it('joins an entry the response already has', async () => {
    const dbTiming: Middleware = async (request, next) =>
      (await next(request)).withHeader('server-timing', 'db;dur=3')
    const { kernel } = await bootApp(ROUTES, {}, { postGlobal: [dbTiming as never] })
    const response = await call(kernel, '/five')
    expect(response.header('server-timing')).toMatch(/^db;dur=3, throttle;dur=\d+\.\d{2}$/)
  })
})
