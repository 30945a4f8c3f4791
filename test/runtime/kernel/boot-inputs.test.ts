/**
 * Boot inputs of the spec's "Kernel boot" table that were not honoured: module aliases given
 * through preGlobalTags / postGlobalTags (the boot failed: "throttle" had no implementation),
 * service providers given as classes (silently ignored), and `matcher` (accepted whatever it was).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import { Kernel, type KernelOptions } from '../../../src/runtime/kernel.js'
import { bootKernel, call, cleanupTempDirs, serve } from './support.js'

afterAll(cleanupTempDirs)

// The default throttle keeps its counters in Redis when REDIS_URL is set, where they outlive the
// run: requests come from a client address of this run's own (X-Forwarded-For from loopback is
// trusted; IPv6 clients are counted per /64), so a second run within 60 s starts afresh.
const group = (): string => randomBytes(2).toString('hex')
const CLIENT = { 'x-forwarded-for': `2001:db8:${group()}:${group()}::1` }

describe('module aliases through container tags', () => {
  it('throttles with a tagged "throttle:2,60" in preGlobalTags, as it does in preGlobal', async () => {
    const container = new Container().set('limit', 'throttle:2,60').tag('pre', 'limit')
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      container,
      preGlobalTags: ['pre'],
    })
    const served = await serve(kernel)
    try {
      const statuses: number[] = []
      for (let i = 0; i < 3; i++)
        statuses.push((await served.send('GET', '/', { headers: CLIENT })).status)
      expect(statuses).toEqual([200, 200, 429])
    } finally {
      await served.close()
    }
  })

  it('loads a tagged module alias from postGlobalTags, registered by a provider', async () => {
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), {
      container: new Container(),
      serviceProviders: [
        { register: (k) => void k.container.set('limit', 'throttle:1,60').tag('post', 'limit') },
      ],
      postGlobalTags: ['post'],
    })
    expect((await call(kernel, { uri: '/', headers: CLIENT })).status).toBe(200)
    const second = await call(kernel, { uri: '/', headers: CLIENT })
    expect(second.status).toBe(429)
    expect(second.header('retry-after')).toBeDefined()
  })
})

describe('service providers given as classes', () => {
  it('instantiates each class once, with no arguments, then runs register and boot', async () => {
    const events: string[] = []
    let instances = 0
    class AppProvider {
      readonly args: number
      constructor(...args: unknown[]) {
        instances++
        this.args = args.length
      }
      register(kernel: Kernel): void {
        events.push(`register:${this.args}:${kernel instanceof Kernel}`)
      }
      async boot(): Promise<void> {
        events.push('boot')
      }
    }
    await bootKernel((r) => r.get('/', () => 'ok'), {
      serviceProviders: [AppProvider, { boot: () => void events.push('object.boot') }],
    })
    expect(instances).toBe(1)
    expect(events).toEqual(['register:0:true', 'boot', 'object.boot'])
  })

  it('refuses anything else with a clear boot error', async () => {
    const cases: [unknown, string][] = [
      [() => ({}), 'a function, not a class'],
      ['AppProvider', 'a string'],
      [null, 'null'],
      [{ regster() {} }, 'an object without register() or boot()'],
      [{ register: 'yes' }, 'an object without register() or boot()'],
      [class Empty {}, 'a class without register() or boot()'],
    ]
    for (const [provider, message] of cases) {
      await expect(
        bootKernel((r) => r.get('/', () => 'ok'), {
          serviceProviders: [provider] as KernelOptions['serviceProviders'],
        }),
      ).rejects.toMatchObject({
        code: 'FW_SERVE_CONFIG',
        message: `serviceProviders[0] is not a service provider (${message})`,
      })
    }
  })
})

describe('the matcher input', () => {
  it("accepts 'sharded', the default", async () => {
    const kernel = await bootKernel((r) => r.get('/', () => 'ok'), { matcher: 'sharded' })
    expect((await call(kernel, '/')).status).toBe(200)
  })

  it('refuses any other value, naming the accepted one', async () => {
    const boot = bootKernel((r) => r.get('/', () => 'ok'), {
      matcher: 'nonsense' as KernelOptions['matcher'],
    })
    await expect(boot).rejects.toMatchObject({
      code: 'FW_SERVE_CONFIG',
      message: 'Unknown matcher "nonsense"',
      hint: expect.stringContaining("'sharded'"),
    })
  })
})
