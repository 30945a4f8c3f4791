/**
 * With requestScopeEnabled, currentRequest() inside a middleware is the request that middleware
 * received (with request_id, and route.name from the route's layers on), before and after
 * `await next(request)`; it used to be the raw incoming request everywhere but in the handler.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { currentRequest } from '../../../src/runtime/kernel.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, serve } from './support.js'

afterAll(cleanupTempDirs)

interface Seen {
  same: boolean
  requestId: unknown
  route: unknown
  tag: unknown
}

const look = (request: FwRequest): Seen => {
  const current = currentRequest()
  return {
    same: current === request,
    requestId: current?.getAttribute('request_id') ?? null,
    route: current?.getAttribute('route.name') ?? null,
    tag: current?.getAttribute('tag') ?? null,
  }
}

describe('currentRequest() in middleware', () => {
  it('is the request each layer received, before and after next(), over HTTP', async () => {
    const seen: Record<string, Seen> = {}
    const layer =
      (name: string): Middleware =>
      async (request, next) => {
        seen[`${name}.before`] = look(request)
        // A derived request goes on: inner layers see it, this one keeps its own.
        const response = await next(request.withAttribute('tag', name))
        seen[`${name}.after`] = look(request)
        return response
      }
    const kernel = await bootKernel(
      (r) => {
        r.get(
          '/s',
          (request: FwRequest) => {
            seen.handler = look(request)
            return 'ok'
          },
          's',
        ).withMiddleware(layer('route'))
      },
      { requestScopeEnabled: true, preGlobal: [layer('pre')], postGlobal: [layer('post')] },
    )
    const served = await serve(kernel)
    try {
      const reply = await served.send('GET', '/s', { headers: { 'x-request-id': 'req-42' } })
      expect(reply.status).toBe(200)
    } finally {
      await served.close()
    }
    const at = (route: unknown, tag: unknown): Seen => ({
      same: true,
      requestId: 'req-42',
      route,
      tag,
    })
    expect(seen).toEqual({
      'pre.before': at(null, null),
      'route.before': at('s', 'pre'),
      'post.before': at('s', 'route'),
      handler: at('s', 'post'),
      'post.after': at('s', 'route'),
      'route.after': at('s', 'pre'),
      'pre.after': at(null, null),
    })
    expect(currentRequest()).toBeUndefined()
  })

  it('keeps concurrent requests apart in middleware', async () => {
    const mismatches: string[] = []
    const check: Middleware = async (request, next) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5))
      if (currentRequest() !== request) mismatches.push(request.getPath())
      const response = await next(request)
      if (currentRequest() !== request) mismatches.push(request.getPath())
      return response
    }
    const kernel = await bootKernel(
      (r) => r.get('/x/{id:int}', (_: FwRequest, id: number) => ({ id })),
      { requestScopeEnabled: true, preGlobal: [check] },
    )
    const served = await serve(kernel)
    try {
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => served.send('GET', `/x/${i}`)),
      )
      expect(replies.every((reply) => reply.status === 200)).toBe(true)
    } finally {
      await served.close()
    }
    expect(mismatches).toEqual([])
  })
})
