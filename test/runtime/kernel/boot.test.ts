/**
 * Kernel boot (spec "Kernel boot and route cache"): the cache must belong to the routes function,
 * service providers register then boot, the per-request scope, the built-in middleware switch and
 * the production HTTPS redirect.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import { currentRequest, Kernel, type ServiceProvider } from '../../../src/runtime/kernel.js'
import { json } from '../../../src/runtime/response.js'
import { silentLogger } from '../../../src/runtime/logger.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import type { Middleware } from '../../../src/runtime/types.js'
import {
  bootKernel,
  buildCacheFor,
  call,
  cleanupTempDirs,
  jsonOf,
  type Register,
} from './support.js'

afterAll(cleanupTempDirs)

describe('the route cache', () => {
  it('refuses to boot with FW_CACHE_STALE when the routes function differs from the one the cache was built from', async () => {
    const built: Register = (r) => r.get('/users', () => [])
    const changed: Register = (r) => {
      r.get('/users', () => [])
      r.get('/posts', () => [])
    }
    const dir = await buildCacheFor(built)
    await expect(
      Kernel.boot({ routeCache: dir, register: changed, log: silentLogger, signingKeys: ['k'] }),
    ).rejects.toMatchObject({ code: 'FW_CACHE_STALE' })
  })

  it('treats a renamed route or changed middleware as stale too', async () => {
    const dir = await buildCacheFor((r) => r.get('/users', () => [], 'users.index'))
    const renamed: Register = (r) => r.get('/users', () => [], 'users.list')
    const guarded: Register = (r) =>
      r.get('/users', () => [], { name: 'users.index', middleware: ['negotiate'] })
    for (const register of [renamed, guarded]) {
      await expect(
        Kernel.boot({ routeCache: dir, register, log: silentLogger, signingKeys: ['k'] }),
      ).rejects.toMatchObject({ code: 'FW_CACHE_STALE' })
    }
  })

  it('boots when only the handlers differ (they are looked up by route id)', async () => {
    const dir = await buildCacheFor((r) => r.get('/users', () => ['old']))
    const kernel = await Kernel.boot({
      routeCache: dir,
      register: (r) => r.get('/users', () => ['new']),
      log: silentLogger,
      signingKeys: ['k'],
    })
    expect(await jsonOf(await call(kernel, '/users'))).toEqual(['new'])
  })

  it('fails with FW_CACHE_MISSING when the directory holds no cache', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'fw-kernel-empty-'))
    try {
      await expect(
        Kernel.boot({
          routeCache: empty,
          register: (r) => r.get('/', () => 'x'),
          log: silentLogger,
          signingKeys: ['k'],
        }),
      ).rejects.toMatchObject({ code: 'FW_CACHE_MISSING' })
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})

describe('service providers', () => {
  it('runs every register, in order, before any boot, each with the kernel', async () => {
    const events: string[] = []
    const kernels: unknown[] = []
    const provider = (name: string): ServiceProvider => ({
      register(kernel) {
        kernels.push(kernel)
        events.push(`${name}.register`)
      },
      async boot(kernel) {
        await new Promise((resolve) => setTimeout(resolve, 5))
        kernels.push(kernel)
        events.push(`${name}.boot`)
      },
    })
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      serviceProviders: [
        provider('a'),
        provider('b'),
        { register: () => void events.push('c.register') },
      ],
    })
    expect(events).toEqual(['a.register', 'b.register', 'c.register', 'a.boot', 'b.boot'])
    expect(kernels).toHaveLength(4)
    for (const k of kernels) expect(k).toBe(kernel)
  })

  it('lets a provider register services and tagged middleware that the routes then use', async () => {
    const stamp: Middleware = async (request, next) =>
      (await next(request)).withHeader('x-provided', 'yes')
    const provider: ServiceProvider = {
      register(kernel) {
        kernel.container
          .set('greeting', 'hello from a provider')
          .set('stamp', stamp)
          .tag('global', 'stamp')
      },
    }
    const kernel = await bootKernel((r) => r.get('/', () => ({ greeting: 'unused' })), {
      serviceProviders: [provider],
      container: new Container(),
      preGlobalTags: ['global'],
    })
    expect(kernel.resolve('greeting')).toBe('hello from a provider')
    expect(kernel.resolve('missing')).toBeUndefined()
    expect((await call(kernel, '/')).header('x-provided')).toBe('yes')
  })

  it('runs middleware a provider tags in boot(), as one that tags in register()', async () => {
    const stamp =
      (value: string): Middleware =>
      async (request, next) =>
        (await next(request)).withHeader(`x-${value}`, 'yes')
    const provider: ServiceProvider = {
      register(kernel) {
        kernel.container.set('early', stamp('early')).tag('global', 'early')
      },
      // A package adding its middleware once the app's services exist, as in Laravel's boot().
      boot(kernel) {
        kernel.container.set('late', stamp('late')).tag('global', 'late')
        kernel.container.set('last', stamp('last')).tag('after', 'last')
      },
    }
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      serviceProviders: [provider],
      container: new Container(),
      preGlobalTags: ['global'],
      postGlobalTags: ['after'],
    })
    const response = await call(kernel, '/')
    expect([
      response.header('x-early'),
      response.header('x-late'),
      response.header('x-last'),
    ]).toEqual(['yes', 'yes', 'yes'])
  })

  it('fails the boot when a provider fails', async () => {
    const provider: ServiceProvider = {
      boot() {
        throw new Error('no database')
      },
    }
    await expect(
      bootKernel((r) => r.get('/', () => 'ok'), { serviceProviders: [provider] }),
    ).rejects.toThrow('no database')
  })
})

describe('the request scope', () => {
  const register: Register = (r) => {
    r.get('/scoped/{id:int}', async (request: FwRequest, id: number) => {
      await new Promise((resolve) => setTimeout(resolve, id === 1 ? 30 : 5))
      const current = currentRequest()
      return { same: current === request, path: current?.getPath() ?? null }
    })
  }

  it('with requestScopeEnabled, currentRequest() is the request being handled, even with concurrent requests', async () => {
    const kernel = await bootKernel(register, { requestScopeEnabled: true })
    const [first, second] = await Promise.all([
      call(kernel, '/scoped/1'),
      call(kernel, '/scoped/2'),
    ])
    expect(await jsonOf(first!)).toEqual({ same: true, path: '/scoped/1' })
    expect(await jsonOf(second!)).toEqual({ same: true, path: '/scoped/2' })
    expect(currentRequest()).toBeUndefined()
  })

  it('lets a middleware see the request through currentRequest() as well', async () => {
    let seen: string | null = null
    const peek: Middleware = (request, next) => {
      seen = currentRequest()?.getPath() ?? null
      return next(request)
    }
    const kernel = await bootKernel(register, { requestScopeEnabled: true, preGlobal: [peek] })
    await call(kernel, '/scoped/2')
    expect(seen).toBe('/scoped/2')
  })

  it('gives a custom error renderer the failing request, with its request id, even on a routing miss', async () => {
    const kernel = await bootKernel(register, {
      requestScopeEnabled: true,
      errorRenderer: (error) =>
        json({ seen: currentRequest()?.getAttribute('request_id') ?? null }, error.status),
    })
    const response = await call(kernel, '/nowhere')
    expect(response.status).toBe(404)
    expect(await jsonOf(response)).toEqual({ seen: response.header('x-request-id') })
  })

  it('without requestScopeEnabled, currentRequest() is undefined inside a handler', async () => {
    const kernel = await bootKernel(register)
    expect(await jsonOf(await call(kernel, '/scoped/2'))).toEqual({ same: false, path: null })
  })
})

describe('built-in middleware switch', () => {
  const register: Register = (r) => {
    r.get('/attributes', (request: FwRequest) => ({
      client_ip: request.getAttribute('client_ip'),
      request_id: request.getAttribute('request_id'),
      trace_id: request.getAttribute('trace.trace_id'),
    }))
  }

  it('sets client_ip, request_id and trace id by default', async () => {
    const kernel = await bootKernel(register)
    const response = await call(kernel, '/attributes')
    const body = await jsonOf(response)
    expect(body.client_ip).toBe('127.0.0.1')
    expect(body.request_id).toBe(response.header('x-request-id'))
    expect(body.trace_id).toMatch(/^[0-9a-f]{32}$/)
  })

  it('with builtins: false leaves out client_ip, request_id, trace and the X-Request-Id header', async () => {
    const kernel = await bootKernel(register, { builtins: false })
    const response = await call(kernel, {
      uri: '/attributes',
      headers: { 'x-request-id': 'given' },
    })
    expect(await jsonOf(response)).toEqual({ client_ip: null, request_id: null, trace_id: null })
    expect(response.header('x-request-id')).toBeUndefined()
  })
})

describe('HTTPS in production', () => {
  const register: Register = (r) =>
    r.get('/account/settings', (request: FwRequest) => ({ secure: request.isSecure() }), 'settings')
  const production = () => bootKernel(register, { env: 'production', signingKeys: ['prod-key'] })

  it('redirects a non-secure request with 301 to the https form of the same host, path and query', async () => {
    const kernel = await production()
    const response = await call(kernel, {
      uri: '/account/settings?tab=security&x=1',
      headers: { host: 'shop.example.com' },
    })
    expect(response.status).toBe(301)
    expect(response.header('location')).toBe(
      'https://shop.example.com/account/settings?tab=security&x=1',
    )
    const bare = await call(kernel, {
      uri: '/account/settings',
      headers: { host: 'shop.example.com' },
    })
    expect(bare.header('location')).toBe('https://shop.example.com/account/settings')
  })

  it('echoes the request id on the redirect, and answers a Host it cannot redirect to with 400', async () => {
    const kernel = await production()
    const moved = await call(kernel, {
      uri: '/account/settings',
      headers: { host: 'shop.example.com', 'x-request-id': 'lb-1234' },
    })
    expect(moved.status).toBe(301)
    expect(moved.header('x-request-id')).toBe('lb-1234')
    const bad = await call(kernel, {
      uri: '/account/settings',
      headers: { host: 'shop.example.com:nope', 'x-request-id': 'lb-5678' },
    })
    expect(bad.status).toBe(400)
    expect(bad.header('location')).toBeUndefined()
    expect(bad.header('x-request-id')).toBe('lb-5678')
    expect(await jsonOf(bad)).toEqual({
      error: 'Invalid Host header',
      code: 400,
      request_id: 'lb-5678',
    })
  })

  it('passes a request a trusted (loopback) proxy marks as https with X-Forwarded-Proto', async () => {
    const kernel = await production()
    const response = await call(kernel, {
      uri: '/account/settings',
      headers: { host: 'shop.example.com', 'x-forwarded-proto': 'https' },
    })
    expect(response.status).toBe(200)
    expect(await jsonOf(response)).toEqual({ secure: true })
  })

  it('ignores X-Forwarded-Proto from an untrusted peer and still redirects', async () => {
    const kernel = await production()
    const response = await call(kernel, {
      uri: '/account/settings',
      headers: { host: 'shop.example.com', 'x-forwarded-proto': 'https' },
      server: { REMOTE_ADDR: '203.0.113.5' },
    })
    expect(response.status).toBe(301)
  })

  it('passes a request that arrived over TLS', async () => {
    const kernel = await production()
    expect((await call(kernel, { uri: 'https://shop.example.com/account/settings' })).status).toBe(
      200,
    )
  })

  it('does not redirect outside production', async () => {
    const kernel = await bootKernel(register, { env: 'development' })
    expect((await call(kernel, '/account/settings')).status).toBe(200)
  })

  it('never signs URLs with a made-up key in production: without URL signing keys the signer refuses', async () => {
    const saved = { keys: process.env.URL_SIGNING_KEYS, secret: process.env.JWT_SECRET }
    delete process.env.URL_SIGNING_KEYS
    delete process.env.JWT_SECRET
    try {
      const dir = await buildCacheFor(register)
      const signing = async (): Promise<unknown> => {
        const kernel = await Kernel.boot({
          routeCache: dir,
          register,
          log: silentLogger,
          env: 'production',
        })
        return kernel.signer.signedUrlFor('settings')
      }
      await expect(signing()).rejects.toThrow(/URL_SIGNING_KEYS/)
    } finally {
      if (saved.keys !== undefined) process.env.URL_SIGNING_KEYS = saved.keys
      if (saved.secret !== undefined) process.env.JWT_SECRET = saved.secret
    }
  })
})
