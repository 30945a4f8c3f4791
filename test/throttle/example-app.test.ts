/**
 * The example app's limits (DESIGN.md, "The example application"): the `/api/v1` group has
 * throttle:60,60 and `GET /api/v1/limited` adds throttle:5,60 on top; `/api/v2` has none.
 * The versioning block of routes.example.ts, as DESIGN.md specifies it.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryStore } from '../../src/throttle/memory-store.js'
import { cleanupProjects } from '../support/project.js'
import { bootApp, burst, call, countOf } from './support.js'

afterAll(() => cleanupProjects())

const EXAMPLE_API = `
const showUser = (version) => (_req, id) => ({ id, version })
export default (r) => {
  r.group({ prefix: '/api/v1', name: 'v1.', middleware: ['throttle:60,60'] }, (r) => {
    r.get('/users/{id:int}', showUser('v1'), 'users.show')
    r.get('/limited', () => ({ limited: true }), 'limited').withMiddleware('throttle:5,60')
  })
  r.group('/api/v2', null, [], 'v2.', (r) => {
    r.get('/users/{id:int}', showUser('v2')).withName('users.show')
  })
  r.get('/{path:.*}', (_req, path) => ({ error: 'Not Found', path: '/' + path }), 'fallback')
}
`

async function bootExample() {
  return bootApp(EXAMPLE_API)
}

describe('the example app under throttle', () => {
  it('limits /api/v1/limited to 5 per minute, stacked on the group limit of 60', async () => {
    const { kernel } = await bootExample()
    const statuses = await burst(kernel, '/api/v1/limited', 50)
    expect(countOf(statuses, 200)).toBe(5)
    expect(countOf(statuses, 429)).toBe(45)
    const refused = await call(kernel, '/api/v1/limited')
    expect(refused.header('x-ratelimit-limit')).toBe('5')
    expect(refused.header('x-ratelimit-remaining')).toBe('0')
    expect(Number(refused.header('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.header('ratelimit-reset'))).toBeLessThanOrEqual(60)
    // The group counted only the 5 served requests: 55 left for the whole of /api/v1.
    const user = await call(kernel, '/api/v1/users/1')
    expect(user.status).toBe(200)
    expect([user.header('x-ratelimit-limit'), user.header('x-ratelimit-remaining')]).toEqual([
      '60',
      '54',
    ])
  })

  it('gives one reset instant in Retry-After, RateLimit-Reset and X-RateLimit-Reset when requests span seconds', async () => {
    // The audit's sequence on a fake clock: one request, 4 s later five more, then one more.
    // Fractional seconds on purpose: the headers used to agree only within one second.
    let now = 1_700_000_000_300
    const { kernel } = await bootApp(EXAMPLE_API, { store: new MemoryStore({ clock: () => now }) })
    expect((await call(kernel, '/api/v1/limited')).status).toBe(200)
    now += 4_100
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await call(kernel, '/api/v1/limited')).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    const refused = await call(kernel, '/api/v1/limited')
    expect(refused.status).toBe(429)
    // The first admission (at .300) frees the route's slot 55.9 s from now: 56 everywhere.
    expect(refused.header('retry-after')).toBe('56')
    expect(refused.header('ratelimit-reset')).toBe('56')
    expect(refused.header('x-ratelimit-reset')).toBe(String(Math.floor(now / 1000) + 56))
    expect(refused.header('x-ratelimit-limit')).toBe('5')

    // A served response: both resets name the instant its tightest limit is whole again.
    now += 500
    const served = await call(kernel, '/api/v1/users/1')
    expect(served.status).toBe(200)
    expect(served.header('ratelimit-reset')).toBe('60')
    expect(served.header('x-ratelimit-reset')).toBe(String(Math.floor(now / 1000) + 60))
  })

  it('shares the 60 per minute of /api/v1 between its routes', async () => {
    const { kernel } = await bootExample()
    const statuses = [
      ...(await burst(kernel, '/api/v1/users/1', 40)),
      ...(await burst(kernel, '/api/v1/users/2', 30)),
    ]
    expect(countOf(statuses, 200)).toBe(60)
    expect((await call(kernel, '/api/v1/limited')).status).toBe(429)
    expect((await call(kernel, '/api/v1/users/1', { ip: '198.51.100.50' })).status).toBe(200)
  })

  it('leaves /api/v2 unthrottled', async () => {
    const { kernel } = await bootExample()
    const response = await call(kernel, '/api/v2/users/7')
    expect(response.status).toBe(200)
    expect(response.header('x-ratelimit-limit')).toBeUndefined()
  })
})
