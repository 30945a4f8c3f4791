/**
 * With requestScopeEnabled the request is bound in the container for its lifecycle, as the spec
 * says ("the request is bound as scoped per request lifecycle"): `container.get('request')` from
 * a service is the request being handled. currentRequest() worked, but the container said
 * `Nothing is bound to "request"`.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import type { Kernel } from '../../../src/runtime/kernel.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { bootKernel, cleanupTempDirs, serve } from './support.js'

afterAll(cleanupTempDirs)

/** A service that reads the request from the container when it is used, as an app's would. */
class Greeter {
  constructor(private readonly container: Container) {}
  greet(): string {
    return `hello ${this.container.get<FwRequest>('request').query('name') as string}`
  }
}

async function bootWith(requestScopeEnabled: boolean): Promise<Kernel> {
  const container = new Container().singleton('greeter', (c) => new Greeter(c))
  return bootKernel(
    (r) =>
      r.get('/greet', async () => {
        // Let the other request run in between: each must still see its own.
        await new Promise((resolve) => setTimeout(resolve, 20))
        return { text: container.get<Greeter>('greeter').greet() }
      }),
    { requestScopeEnabled, container },
  )
}

describe('container.get("request") with requestScopeEnabled', () => {
  it('is the request being handled, for requests in flight at once', async () => {
    const kernel = await bootWith(true)
    const server = await serve(kernel)
    try {
      const [ada, bob] = await Promise.all([
        server.send('GET', '/greet?name=ada'),
        server.send('GET', '/greet?name=bob'),
      ])
      expect(JSON.parse(ada.text)).toEqual({ text: 'hello ada' })
      expect(JSON.parse(bob.text)).toEqual({ text: 'hello bob' })
    } finally {
      await server.close()
    }
  })

  it('throws a clear error outside a request', async () => {
    const kernel = await bootWith(true)
    expect(() => kernel.container.get('request')).toThrow(
      'No request is being handled: container.get("request") works only during one',
    )
  })

  it('is not bound without the request scope, and an app’s own binding is kept', async () => {
    expect((await bootWith(false)).container.has('request')).toBe(false)
    const container = new Container().set('request', 'mine')
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      requestScopeEnabled: true,
      container,
    })
    expect(kernel.container.get('request')).toBe('mine')
  })
})

describe('Container.bind', () => {
  it('runs its factory at every get, where a singleton’s runs once', () => {
    let made = 0
    const container = new Container()
      .bind('fresh', () => ({ n: ++made }))
      .singleton('once', () => ({ n: ++made }))
    expect(container.get('fresh')).toEqual({ n: 1 })
    expect(container.get('fresh')).toEqual({ n: 2 })
    expect(container.get('once')).toEqual({ n: 3 })
    expect(container.get('once')).toEqual({ n: 3 })
    container.singleton('fresh', () => 'now a singleton')
    expect(container.get('fresh')).toBe(container.get('fresh'))
  })
})
