/**
 * The kernel's middleware pipeline: pre-global → group (outer to inner) → route → post-global
 * around the handler, aliases (routes-file and kernel factories with their parameters), container
 * tags, short-circuits, derived requests, and the boot error for an alias with no implementation.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import {
  FwRequest as FwRequestFactory,
  type FwRequest,
} from '../../../src/runtime/request/request.js'
import { json, type FwResponse } from '../../../src/runtime/response.js'
import type { Middleware, MiddlewareFactory } from '../../../src/runtime/types.js'
import { bootKernel, call, cleanupTempDirs, jsonOf, serve, textOf } from './support.js'
import { createThrottle } from '../../../src/throttle/middleware.js'
import { MemoryStore } from '../../../src/throttle/memory-store.js'

afterAll(cleanupTempDirs)

/** A middleware that records entering and leaving around the rest of the pipeline. */
function recorder(events: string[], name: string): Middleware {
  return async function record(request, next) {
    events.push(`>${name}`)
    const response = await next(request)
    events.push(`<${name}`)
    return response
  }
}

describe('middleware order', () => {
  it('runs pre-global, groups outer to inner, route, post-global, each wrapping the next', async () => {
    const events: string[] = []
    const kernel = await bootKernel(
      (r) => {
        r.group({ prefix: '/outer', middleware: [recorder(events, 'group-outer')] }, (r) => {
          r.group({ prefix: '/inner', middleware: [recorder(events, 'group-inner')] }, (r) => {
            r.get(
              '/x',
              () => {
                events.push('handler')
                return 'done'
              },
              { middleware: [recorder(events, 'route-option')] },
            ).withMiddleware(recorder(events, 'route-chained'))
          })
        })
      },
      {
        preGlobal: [recorder(events, 'pre-1'), recorder(events, 'pre-2')],
        postGlobal: [recorder(events, 'post-1'), recorder(events, 'post-2')],
      },
    )
    const response = await call(kernel, '/outer/inner/x')
    expect(response.status).toBe(200)
    expect(await textOf(response)).toBe('done')
    expect(events).toEqual([
      '>pre-1',
      '>pre-2',
      '>group-outer',
      '>group-inner',
      '>route-option',
      '>route-chained',
      '>post-1',
      '>post-2',
      'handler',
      '<post-2',
      '<post-1',
      '<route-chained',
      '<route-option',
      '<group-inner',
      '<group-outer',
      '<pre-2',
      '<pre-1',
    ])
  })

  it('runs pre-global middleware on routing misses too, but not route or post-global middleware', async () => {
    const events: string[] = []
    const kernel = await bootKernel(
      (r) => {
        r.get('/known', () => 'ok', { middleware: [recorder(events, 'route')] })
      },
      { preGlobal: [recorder(events, 'pre')], postGlobal: [recorder(events, 'post')] },
    )
    const response = await call(kernel, '/unknown')
    expect(response.status).toBe(404)
    expect(events).toEqual(['>pre', '<pre'])
  })

  it('runs the built-in middleware before the explicit pre-global list', async () => {
    const seen: unknown[] = []
    const pre: Middleware = (request, next) => {
      seen.push(request.getAttribute('request_id'), request.getAttribute('client_ip'))
      return next(request)
    }
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), { preGlobal: [pre] })
    await call(kernel, { uri: '/', headers: { 'x-request-id': 'abc-1' } })
    expect(seen).toEqual(['abc-1', '127.0.0.1'])
  })

  it('appends middleware tagged in the container after the explicit pre- and post-global lists', async () => {
    const events: string[] = []
    const container = new Container()
    container
      .set('audit', recorder(events, 'tagged-pre'))
      .set('stamp', recorder(events, 'tagged-post'))
    container.tag('before', 'audit').tag('after', 'stamp')
    const kernel = await bootKernel(
      (r) =>
        r.get('/', () => {
          events.push('handler')
          return 'ok'
        }),
      {
        container,
        preGlobal: [recorder(events, 'pre')],
        postGlobal: [recorder(events, 'post')],
        preGlobalTags: ['before'],
        postGlobalTags: ['after'],
      },
    )
    await call(kernel, '/')
    expect(events).toEqual([
      '>pre',
      '>tagged-pre',
      '>post',
      '>tagged-post',
      'handler',
      '<tagged-post',
      '<post',
      '<tagged-pre',
      '<pre',
    ])
  })

  it('lets several tags contribute, in the order the tags are listed', async () => {
    const events: string[] = []
    const container = new Container()
    container
      .set('a', recorder(events, 'a'))
      .set('b', recorder(events, 'b'))
      .set('c', recorder(events, 'c'))
    container.tag('first', 'a', 'b').tag('second', 'c')
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      container,
      preGlobalTags: ['second', 'first'],
    })
    await call(kernel, '/')
    expect(events).toEqual(['>c', '>a', '>b', '<b', '<a', '<c'])
  })
})

describe('middleware around a body that fails to load', () => {
  it('still gets a response (the 400 or 413) to add its headers to', async () => {
    const stamp: Middleware = async (request, next) =>
      (await next(request)).withHeader('x-stamp', 'seen')
    const kernel = await bootKernel((r) => {
      r.post('/stamped', (request: FwRequest) => request.json(), { middleware: [stamp] })
      r.post('/bare', (request: FwRequest) => request.json())
    })
    const served = await serve(kernel)
    try {
      const json = { 'content-type': 'application/json' }
      const broken = await served.send('POST', '/stamped', { headers: json, body: '{"a":' })
      expect([broken.status, broken.headers['x-stamp'], JSON.parse(broken.text).error]).toEqual([
        400,
        'seen',
        'Malformed JSON body',
      ])
      const deep = await served.send('POST', '/bare', {
        headers: json,
        body: '['.repeat(100) + ']'.repeat(100),
      })
      expect(deep.status).toBe(413)
      const fine = await served.send('POST', '/stamped', { headers: json, body: '{"a":1}' })
      expect([fine.status, fine.headers['x-stamp'], fine.text]).toEqual([200, 'seen', '{"a":1}'])
    } finally {
      await served.close()
    }
  })
})

describe('middleware aliases', () => {
  it('uses an alias registered in the routes file with r.alias', async () => {
    const kernel = await bootKernel((r) => {
      r.alias('stamp', async (request: FwRequest, next: (r: FwRequest) => Promise<any>) =>
        (await next(request)).withHeader('x-stamp', 'yes'),
      )
      r.get('/stamped', () => 'ok', { middleware: ['stamp'] })
      r.get('/plain', () => 'ok')
    })
    expect((await call(kernel, '/stamped')).header('x-stamp')).toBe('yes')
    expect((await call(kernel, '/plain')).header('x-stamp')).toBeUndefined()
  })

  it('builds kernel alias middleware from its factory with the alias parameters split on commas', async () => {
    const calls: { params: string[]; env: string }[] = []
    const throttle: MiddlewareFactory = (params, context) => {
      calls.push({ params, env: context.env })
      return async (request, next) => (await next(request)).withHeader('x-limit', params.join('/'))
    }
    const role: MiddlewareFactory = (params) => (request, next) =>
      next(request.withAttribute('roles', params))
    const kernel = await bootKernel(
      (r) => {
        r.get('/limited', (request: FwRequest) => ({ roles: request.getAttribute('roles') }), {
          middleware: ['throttle:5,60', 'role:admin,editor'],
        })
      },
      { middleware: { throttle, role } },
    )
    expect(calls).toEqual([{ params: ['5', '60'], env: 'test' }])
    const response = await call(kernel, '/limited')
    expect(response.header('x-limit')).toBe('5/60')
    expect(await jsonOf(response)).toEqual({ roles: ['admin', 'editor'] })
  })

  it('resolves alias strings in the global lists through the kernel factories', async () => {
    const seen: string[][] = []
    const limit: MiddlewareFactory = (params) => {
      seen.push(params)
      return async (request, next) => (await next(request)).withHeader('x-limit', params.join(','))
    }
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      middleware: { limit },
      preGlobal: ['limit:5,60'],
    })
    expect(seen).toEqual([['5', '60']])
    expect((await call(kernel, '/')).header('x-limit')).toBe('5,60')
  })

  it('passes an empty parameter list to a factory used without parameters', async () => {
    const seen: string[][] = []
    const auth: MiddlewareFactory = (params) => {
      seen.push(params)
      return (request, next) => next(request)
    }
    await bootKernel((r) => r.get('/', () => 'ok', { middleware: ['auth'] }), {
      middleware: { auth },
    })
    expect(seen).toEqual([[]])
  })

  it('fails the boot with FW_MIDDLEWARE_INVALID when a custom alias has no implementation', async () => {
    const register = (r: any): void => {
      r.alias('tenant', 'tenant-impl')
      r.get('/me', () => 'ok', { middleware: ['tenant'] })
    }
    await expect(bootKernel(register, { env: 'test' })).rejects.toMatchObject({
      code: 'FW_MIDDLEWARE_INVALID',
      message: expect.stringContaining('"tenant-impl"'),
    })
  })

  it('resolves an alias registered with another alias string, parameters of a use replacing its own', async () => {
    // An in-process store of its own: with REDIS_URL set, counts would carry over between runs.
    const throttle = createThrottle({ store: new MemoryStore() })
    const kernel = await bootKernel(
      (r) => {
        r.alias('limit', 'throttle:2,60')
        r.get('/two', () => 'ok', { middleware: ['limit'] })
        r.get('/one', () => 'ok', { middleware: ['limit:1,60'] })
      },
      { middleware: { throttle } },
    )
    const limits = async (path: string): Promise<(string | number | undefined)[]> => {
      const response = await call(kernel, path)
      return [response.status, response.header('x-ratelimit-limit')]
    }
    expect(await limits('/two')).toEqual([200, '2'])
    expect(await limits('/two')).toEqual([200, '2'])
    expect((await call(kernel, '/two')).status).toBe(429)
    expect(await limits('/one')).toEqual([200, '1'])
    expect((await call(kernel, '/one')).status).toBe(429)
  })

  it('loads the module an alias string names (auth here) when no factory is given', async () => {
    const kernel = await bootKernel((r) => {
      r.alias('guard', 'auth')
      r.get('/me', () => 'ok', { middleware: ['guard'] })
    })
    expect((await call(kernel, '/me')).status).toBe(401)
  })

  it('fails the boot naming the loop when aliases name each other', async () => {
    const register = (r: any): void => {
      r.alias('a', 'b')
      r.alias('b', 'a')
      r.get('/', () => 'ok', { middleware: ['a'] })
    }
    await expect(bootKernel(register, { env: 'test' })).rejects.toMatchObject({
      code: 'FW_MIDDLEWARE_INVALID',
      message: 'Middleware aliases name each other in a loop: a → b → a',
    })
  })

  it('loads the auth module when a route uses the auth alias and none is given', async () => {
    const kernel = await bootKernel((r) => r.get('/me', () => 'ok', { middleware: ['auth'] }))
    const response = await call(kernel, '/me')
    expect(response.status).toBe(401)
    expect(response.header('www-authenticate')).toBe('Bearer')
  })

  it('fails the boot with FW_MIDDLEWARE_INVALID for an unknown alias in the global lists', async () => {
    await expect(
      bootKernel((r) => r.get('/', () => 'ok'), { postGlobal: ['nope:1'] }),
    ).rejects.toMatchObject({ code: 'FW_MIDDLEWARE_INVALID' })
  })
})

describe('what middleware can do', () => {
  it('short-circuits: a response returned without calling next is sent and the handler never runs', async () => {
    const events: string[] = []
    const block: Middleware = () => json({ error: 'blocked' }, 403)
    const kernel = await bootKernel(
      (r) => {
        r.get(
          '/secret',
          () => {
            events.push('handler')
            return 'secret'
          },
          { middleware: [block, recorder(events, 'inner')] },
        )
      },
      { preGlobal: [recorder(events, 'pre')], postGlobal: [recorder(events, 'post')] },
    )
    const response = await call(kernel, '/secret')
    expect(response.status).toBe(403)
    expect(await jsonOf(response)).toEqual({ error: 'blocked' })
    expect(events).toEqual(['>pre', '<pre'])
    // A middleware's own response is not an error response: the boundary leaves it alone.
    expect(response.header('cache-control')).toBeUndefined()
  })

  it('derives the request: the handler sees the attribute, the outer middleware keeps its own request', async () => {
    let outerSaw: unknown = 'unset'
    const outer: Middleware = async (request, next) => {
      const response = await next(request)
      outerSaw = request.getAttribute('user')
      return response
    }
    const derive: Middleware = (request, next) => next(request.withAttribute('user', 'ada'))
    const kernel = await bootKernel((r) => {
      r.get('/who', (request: FwRequest) => ({ user: request.getAttribute('user') }), {
        middleware: [outer, derive],
      })
    })
    expect(await jsonOf(await call(kernel, '/who'))).toEqual({ user: 'ada' })
    expect(outerSaw).toBeNull()
  })

  it('lets an outer middleware decorate the response the inner layers produced', async () => {
    const timing: Middleware = async (request, next) =>
      (await next(request)).withHeader('x-took', '1ms')
    const kernel = await bootKernel((r) => r.get('/', () => ({ ok: true })), {
      postGlobal: [timing],
    })
    const response = await call(kernel, '/')
    expect(response.header('x-took')).toBe('1ms')
    expect(await jsonOf(response)).toEqual({ ok: true })
  })

  it('gives an outer middleware the rendered error response when an inner layer throws', async () => {
    let seenStatus = 0
    const outer: Middleware = async (request, next) => {
      const response = await next(request)
      seenStatus = response.status
      return response.withHeader('x-outer', 'ran')
    }
    const explode: Middleware = () => {
      throw new Error('inner failure')
    }
    const kernel = await bootKernel((r) => r.get('/', () => 'ok', { middleware: [outer, explode] }))
    const response = await call(kernel, '/')
    expect(seenStatus).toBe(500)
    expect(response.status).toBe(500)
    expect(response.header('x-outer')).toBe('ran')
  })
})

describe('synchronous answers', () => {
  it('respond() gives the response itself when every step is synchronous, a promise otherwise', async () => {
    const passThrough: Middleware = (request, next) => next(request)
    const kernel = await bootKernel((r) => {
      r.get('/sync', () => json({ sync: true }))
      r.get('/async', async () => json({ sync: false }))
      r.get('/wrapped', () => json({ wrapped: true }), { middleware: [passThrough] })
    })
    const request = (uri: string): FwRequest => FwRequestFactory.create({ uri })
    const sync = kernel.respond(request('/sync'))
    expect(sync).not.toBeInstanceOf(Promise)
    expect(JSON.parse((sync as FwResponse).body as string)).toEqual({ sync: true })
    // The built-in context still runs: the request id is echoed on the synchronous answer.
    expect((sync as FwResponse).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    for (const uri of ['/async', '/wrapped']) {
      const answer = kernel.respond(request(uri))
      expect(answer).toBeInstanceOf(Promise)
      expect((await answer).status).toBe(200)
    }
    // handle() always promises, whatever respond() gave.
    await expect(kernel.handle(request('/sync'))).resolves.toMatchObject({ status: 200 })
  })

  it('a synchronous throw in a handler is still an error response', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/boom', () => {
        throw new Error('boom')
      })
    })
    const answer = await kernel.respond(FwRequestFactory.create({ uri: '/boom' }))
    expect(answer.status).toBe(500)
    expect(JSON.parse(answer.body as string)).toMatchObject({ error: 'Internal Server Error' })
  })
})
