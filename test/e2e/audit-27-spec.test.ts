/**
 * Audit 27, a row-by-row pass over the spec's registration interface, error boundary and limits
 * over real HTTP: the rows earlier sweeps leave unasserted. Registration: the positional group
 * (prefix, domain, middleware, namePrefix, callback) nested in an options group, names and
 * middleware in the options array, withName/withMiddleware chaining, the three handler forms.
 * Error boundary: a response a controller returns is left alone, whatever its status; a typed
 * exception's public message and headers are rendered. Limits: the example values of the spec.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Container } from '../../src/runtime/container.js'
import { forbidden, HttpError } from '../../src/runtime/http-error.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { create, json, noContent, redirect } from '../../src/runtime/response.js'
import type { Middleware } from '../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from '../runtime/kernel/support.js'

// Counters may live in Redis (REDIS_URL) and outlive the run: a client address of this run's own.
const group = (): string => randomBytes(2).toString('hex')
const RUN = `2001:db8:${group()}:${group()}`
const client = (n: number): Record<string, string> => ({ 'x-forwarded-for': `${RUN}:${n}::1` })

class UserController {
  show(_req: FwRequest, id: number) {
    return { controller: id }
  }
}

let served: Served
const seen: string[] = []
const tag =
  (name: string): Middleware =>
  (req, next) => {
    seen.push(name)
    return next(req)
  }

beforeAll(async () => {
  const container = new Container().set('greeter', {
    hello: (_req: FwRequest, who: string) => ({ hello: who }),
  })
  const kernel = await bootKernel(
    (r) => {
      r.alias('outer', tag('outer'))
      r.alias('inner', tag('inner'))
      r.alias('own', tag('own'))
      r.group('/api', null, ['outer'], 'api.', (r) => {
        r.group({ prefix: '/v1', name: 'v1.', middleware: ['inner'] }, (r) => {
          const route = r.get('/users/{id:int}', [UserController, 'show'])
          expect(route.withName('users.show')).toBe(route)
          expect(route.withMiddleware(['own'])).toBe(route)
          r.get('/hello/{who}', 'greeter@hello', { name: 'hello', middleware: ['own'] })
        })
      })
      r.get('/created', () => create('made', 201, { location: '/things/1' }))
      r.get('/empty', () => noContent())
      r.get('/moved', () => redirect('/elsewhere'))
      r.get('/own-500', () => json({ mine: true }, 500))
      r.get('/own-404', () => create('gone', 404))
      r.get('/forbidden', () => {
        throw forbidden('No entry here')
      })
      r.get('/teapot', () => {
        throw new HttpError(418, { headers: { 'x-tea': 'earl grey' } })
      })
      for (const limit of ['5,60', '10,300', '3,3600', '60,60', '120,60', '600,60'])
        r.get(`/limit/${limit.replace(',', '-')}`, () => 'ok', {
          middleware: [`throttle:${limit}`],
        })
    },
    { container },
  )
  served = await serve(kernel)
})

afterAll(async () => {
  await served?.close()
  cleanupTempDirs()
})

describe('audit-27 spec: route registration', () => {
  it('composes a positional group around an options group: prefixes, names and middleware', async () => {
    seen.length = 0
    const user = await served.send('GET', '/api/v1/users/7')
    expect([user.status, JSON.parse(user.text)]).toEqual([200, { controller: 7 }])
    expect(seen).toEqual(['outer', 'inner', 'own'])
    seen.length = 0
    const hello = await served.send('GET', '/api/v1/hello/ada')
    expect([hello.status, JSON.parse(hello.text)]).toEqual([200, { hello: 'ada' }])
    expect(seen).toEqual(['outer', 'inner', 'own'])
  })
})

describe('audit-27 spec: responses and the error boundary', () => {
  it('sends the response helpers as built: 201 + Location, 204, 302 + Location', async () => {
    const created = await served.send('GET', '/created')
    expect([created.status, created.headers.location, created.text]).toEqual([
      201,
      '/things/1',
      'made',
    ])
    expect((await served.send('GET', '/empty')).status).toBe(204)
    const moved = await served.send('GET', '/moved')
    expect([moved.status, moved.headers.location]).toEqual([302, '/elsewhere'])
  })

  it('leaves alone an error status a controller returns itself', async () => {
    const own500 = await served.send('GET', '/own-500')
    expect([own500.status, own500.text]).toEqual([500, '{"mine":true}'])
    const own404 = await served.send('GET', '/own-404')
    expect([own404.status, own404.text]).toEqual([404, 'gone'])
  })

  it("renders a typed exception's status, public message and headers", async () => {
    const denied = await served.send('GET', '/forbidden')
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.text)).toMatchObject({ error: 'No entry here' })
    const teapot = await served.send('GET', '/teapot')
    expect([teapot.status, teapot.headers['x-tea']]).toEqual([418, 'earl grey'])
  })
})

describe('audit-27 spec: the example throttle values', () => {
  it.each([
    [5, 60],
    [10, 300],
    [3, 3600],
  ])('lets %i requests per %i s through and refuses the next with 429', async (max, seconds) => {
    const path = `/limit/${max}-${seconds}`
    const headers = client(max)
    for (let i = 1; i <= max; i++) {
      const ok = await served.send('GET', path, { headers })
      expect(ok.status).toBe(200)
      expect(ok.headers['x-ratelimit-limit']).toBe(String(max))
      expect(ok.headers['x-ratelimit-remaining']).toBe(String(max - i))
    }
    const refused = await served.send('GET', path, { headers })
    expect(refused.status).toBe(429)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    const retry = Number(refused.headers['retry-after'])
    expect(retry).toBeGreaterThan(0)
    expect(retry).toBeLessThanOrEqual(seconds)
  })

  it.each([60, 120, 600])('takes throttle:%i,60 and counts down from it', async (max) => {
    const ok = await served.send('GET', `/limit/${max}-60`, { headers: client(max) })
    expect(ok.status).toBe(200)
    expect([ok.headers['x-ratelimit-limit'], ok.headers['ratelimit-limit']]).toEqual([
      String(max),
      String(max),
    ])
    expect(ok.headers['x-ratelimit-remaining']).toBe(String(max - 1))
  })
})
