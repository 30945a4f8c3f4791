/**
 * Regression tests from an audit of the kernel's features and the smaller built-in middleware:
 * global middleware entries and built-in alias parameters checked at boot (the compiler only
 * checks the routes file's), and string handlers naming container entries.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import type { FwResponse } from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { bootKernel, call, captureLogger, cleanupTempDirs, jsonOf } from './support.js'

afterAll(cleanupTempDirs)

const plainRoutes = (r: any): void => {
  r.get('/', (req: FwRequest) => ({ locale: req.getAttribute('locale') ?? null }))
}

describe('global middleware entries', () => {
  it('fails the boot naming an entry that is neither an alias string nor a function', async () => {
    const preGlobal = [42] as unknown as Middleware[]
    await expect(bootKernel(plainRoutes, { preGlobal })).rejects.toThrow(
      'Middleware 42 is not an alias string or a function',
    )
  })

  it('fails the boot the same way for a tagged container entry holding a list', async () => {
    const container = new Container().set('limits', ['throttle:5,60']).tag('pre', 'limits')
    await expect(bootKernel(plainRoutes, { container, preGlobalTags: ['pre'] })).rejects.toThrow(
      'Middleware ["throttle:5,60"] is not an alias string or a function',
    )
  })
})

describe('built-in alias parameters in the global lists', () => {
  it.each(['negotiate:', 'negotiate:<script>', 'negotiate:en,,fr'])(
    'refuses %s at boot: its locales would reach every response as `locale`',
    async (alias) => {
      await expect(bootKernel(plainRoutes, { preGlobal: [alias] })).rejects.toThrow(
        /negotiate.*language tags/,
      )
    },
  )

  it.each([
    ['verifySignedUrl:x', /verifySignedUrl:x: takes no parameters/],
    ['throttle:0,60', /throttle:0,60: expects one or two positive integers/],
    ['auth:maybe', /auth:maybe: takes no parameters/],
  ])('refuses %s at boot, as the compiler does in a routes file', async (alias, message) => {
    await expect(bootKernel(plainRoutes, { preGlobal: [alias] })).rejects.toMatchObject({
      code: 'FW_MIDDLEWARE_INVALID',
      message: expect.stringMatching(message),
    })
  })

  it('leaves the parameters of an alias the app implements itself to it', async () => {
    const seen: string[][] = []
    const throttle = (params: string[]) => {
      seen.push(params)
      return (request: FwRequest, next: (r: FwRequest) => Promise<FwResponse>) => next(request)
    }
    await bootKernel(plainRoutes, { preGlobal: ['throttle:burst'], middleware: { throttle } })
    expect(seen).toEqual([['burst']])
  })

  it('fails the boot naming the alias when its factory throws', async () => {
    const cfg = () => {
      throw new Error('bad cfg')
    }
    await expect(
      bootKernel(plainRoutes, { preGlobal: ['cfg:x'], middleware: { cfg } }),
    ).rejects.toMatchObject({
      code: 'FW_MIDDLEWARE_INVALID',
      message: 'Middleware "cfg:x" failed to build: bad cfg',
    })
  })

  it.each([
    ['returns no function', { cfg: () => undefined }, 'its factory returned undefined'],
    ['is no function', { cfg: 'nope' }, 'has no implementation'],
  ])('fails the boot naming the alias when its factory %s', async (_what, middleware, message) => {
    await expect(
      bootKernel(plainRoutes, { preGlobal: ['cfg'], middleware: middleware as never }),
    ).rejects.toMatchObject({
      code: 'FW_MIDDLEWARE_INVALID',
      message: expect.stringContaining(message),
    })
  })

  it('still takes well-formed locales there', async () => {
    const kernel = await bootKernel(plainRoutes, { preGlobal: ['negotiate:en,fr-CH'] })
    const response = await call(kernel, { uri: '/', headers: { 'accept-language': 'fr-ch' } })
    expect(await jsonOf(response)).toEqual({ locale: 'fr-CH' })
  })
})

describe('string handlers', () => {
  it("calls a function bound in the container when a 'Key' handler names it", async () => {
    const container = new Container().set('home', (req: FwRequest, id: number) => ({
      home: id,
      path: req.getPath(),
    }))
    const kernel = await bootKernel((r) => r.get('/home/{id:int}', 'home'), { container })
    const response = await call(kernel, '/home/7')
    expect(response.status).toBe(200)
    expect(await jsonOf(response)).toEqual({ home: 7, path: '/home/7' })
  })

  it("prefers an __invoke method of a bound function, as of any 'Key' entry", async () => {
    const bound = Object.assign(() => 'the function', { __invoke: () => 'its __invoke' })
    const container = new Container().set('ping', bound)
    const kernel = await bootKernel((r) => r.get('/ping', 'ping'), { container })
    expect(await (await call(kernel, '/ping')).body).toBe('its __invoke')
  })

  it('answers 500 and logs what is missing for an entry bound to null', async () => {
    const log = captureLogger()
    const container = new Container().set('users', null)
    const kernel = await bootKernel((r) => r.get('/users', 'users@index'), { container, log })
    expect((await call(kernel, '/users')).status).toBe(500)
    const logged = log.lines.find((line) => line.level === 'error')?.obj as { err?: Error }
    expect(logged.err?.message).toBe('Handler "users@index": "users" has no method "index"')
  })
})

describe('the container', () => {
  it('names the cycle when singletons need each other, instead of overflowing the stack', () => {
    const container = new Container()
      .singleton('a', (c) => ({ b: c.get('b') }))
      .singleton('b', (c) => ({ a: c.get('a') }))
    expect(() => container.get('a')).toThrow('Circular dependency in the container: a -> b -> a')
    // Nothing was half-built: after the failure, an unrelated binding still resolves.
    container.set('c', 1)
    expect(container.get('c')).toBe(1)
  })

  it('names the cycle of async singletons that await each other, which hung the boot', async () => {
    const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
    const container = new Container()
      .singleton('a', async (c) => {
        await tick()
        return { b: await c.get('b') }
      })
      .singleton('b', async (c) => {
        await tick()
        return { a: await c.get('a') }
      })
    const provider = { boot: async () => void (await container.get('a')) }
    await expect(
      bootKernel((r) => r.get('/', () => 'ok'), { container, serviceProviders: [provider] }),
    ).rejects.toThrow('Circular dependency in the container: a -> b -> a')
  })

  it('lets a settled async singleton be read from a timer its factory started', async () => {
    let read: (value: Promise<unknown>) => void = () => {}
    const later = new Promise<Promise<unknown>>((resolve) => (read = resolve))
    const container = new Container().singleton('db', async (c) => {
      await new Promise((resolve) => setImmediate(resolve))
      setTimeout(() => read(c.get('db')), 5)
      return { connected: true }
    })
    const db = await container.get('db')
    // Read by the timer, whenever it runs (after the singleton settled).
    expect(await await later).toBe(db)
  })
})
