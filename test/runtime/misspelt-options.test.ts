/**
 * Misspelt options from plain JavaScript (a scaffolded server.mjs is not type-checked) were
 * ignored without a word: `Kernel.boot({ requestScopeEnbled: true })` booted with the request
 * scope off, and `currentRequest()` failed only later, in a request. Each options object now
 * refuses a name it does not know where it is given, naming the closest valid one.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Kernel } from '../../src/runtime/kernel.js'
import { KERNEL_OPTIONS } from '../../src/runtime/kernel-options.js'
import { createListener } from '../../src/runtime/node-adapter.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { UrlSigner } from '../../src/runtime/signed-url.js'
import { TemplateViews } from '../../src/runtime/views.js'
import { bootKernel, buildCacheFor, cleanupTempDirs } from './kernel/support.js'

afterAll(cleanupTempDirs)

const routes = (r: Parameters<Parameters<typeof bootKernel>[0]>[0]): void => {
  r.get('/', () => 'ok', 'home')
}
// Options as plain JavaScript passes them: no type to catch the typo.
const untyped = <T>(options: Record<string, unknown>): T => options as T

describe('Kernel.boot', () => {
  it('refuses a misspelt option, naming the one it resembles', async () => {
    await expect(bootKernel(routes, untyped({ requestScopeEnbled: true }))).rejects.toMatchObject({
      name: 'FwError',
      code: 'FW_SERVE_CONFIG',
      message:
        'Kernel.boot(): unknown option `requestScopeEnbled` — did you mean `requestScopeEnabled`?',
    })
  })

  it('takes a difference of case as a misspelling of the option', async () => {
    await expect(bootKernel(routes, untyped({ errorrenderer: () => null }))).rejects.toThrow(
      'Kernel.boot(): unknown option `errorrenderer` — did you mean `errorRenderer`?',
    )
  })

  it('lists the options when no name is close, and refuses an unknown key set to undefined', async () => {
    await expect(bootKernel(routes, untyped({ listenPort: undefined }))).rejects.toThrow(
      `Kernel.boot(): unknown option \`listenPort\` — valid options: ${KERNEL_OPTIONS.join(', ')}`,
    )
  })

  it('refuses a misspelt request option and body limit', async () => {
    await expect(bootKernel(routes, untyped({ request: { limit: { body: 10 } } }))).rejects.toThrow(
      'Kernel.boot() request: unknown option `limit` — did you mean `limits`?',
    )
    await expect(
      bootKernel(routes, untyped({ request: { limits: { fileSise: 10 } } })),
    ).rejects.toThrow(
      'Kernel.boot() request.limits: unknown option `fileSise` — did you mean `fileSize`?',
    )
  })

  it('boots with every option it documents given as undefined', async () => {
    const routeCache = await buildCacheFor(routes)
    const every = Object.fromEntries(KERNEL_OPTIONS.map((name) => [name, undefined]))
    const kernel = await Kernel.boot({ ...every, routeCache, register: routes, env: 'test' })
    expect((await kernel.handle(FwRequest.create({ uri: '/' }))).status).toBe(200)
  })
})

describe('the other runtime options objects', () => {
  it('createListener refuses a misspelt option', () => {
    expect(() =>
      createListener(() => undefined as never, untyped({ expectContinu: true })),
    ).toThrow(
      new TypeError(
        'createListener(): unknown option `expectContinu` — did you mean `expectContinue`?',
      ),
    )
  })

  it('new UrlSigner refuses a misspelt option', () => {
    const urlFor = (): string => '/'
    expect(() => new UrlSigner(untyped({ keys: ['k'], urlFor, payloadmode: 'absolute' }))).toThrow(
      new TypeError('new UrlSigner(): unknown option `payloadmode` — did you mean `payloadMode`?'),
    )
  })

  it('new TemplateViews refuses a misspelt option', () => {
    expect(() => new TemplateViews(untyped({ dirs: 'views' }))).toThrow(
      new TypeError('new TemplateViews(): unknown option `dirs` — did you mean `dir`?'),
    )
  })

  it('FwRequest.create refuses a misspelt init field and request option', () => {
    expect(() => FwRequest.create(untyped({ uri: '/', header: { accept: 'text/html' } }))).toThrow(
      new TypeError('FwRequest.create(): unknown option `header` — did you mean `headers`?'),
    )
    expect(() => FwRequest.create({}, untyped({ uploadDire: '/tmp' }))).toThrow(
      new TypeError(
        'FwRequest.create() options: unknown option `uploadDire` — did you mean `uploadDir`?',
      ),
    )
  })

  it('FwRequest.create still takes its fields, undefined ones included', () => {
    const request = FwRequest.create({
      method: 'POST',
      uri: '/x?a=1',
      query: { b: '2' },
      post: undefined,
      headers: { accept: 'text/html' },
      cookies: { c: '3' },
      files: undefined,
      server: { REMOTE_ADDR: '10.0.0.1' },
      body: undefined,
      attributes: { d: 4 },
      signal: undefined,
    })
    expect(request.getQueryParams()).toEqual({ a: '1', b: '2' })
    expect(request.getAttribute('d')).toBe(4)
  })
})
