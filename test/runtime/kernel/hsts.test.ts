/**
 * Strict-Transport-Security: production redirected plain http to https but never said so for
 * good, so every later visit typed without a scheme (and every link to http://) went over plain
 * http first, where it can be intercepted before the 301. Production's responses to secure
 * requests (TLS, or X-Forwarded-Proto https from a trusted proxy) carry it when the `hsts` kernel
 * option asks (opt-in, as Django's SECURE_HSTS_SECONDS); plain-http ones never do (RFC 6797
 * §7.2), nor do development's; a handler's own header is kept; the option shapes it, and a value
 * hstspreload.org would refuse is a boot error.
 */
import { readFileSync } from 'node:fs'
import { request as httpsRequest, createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { attachKernel } from '../../../src/runtime/node-adapter.js'
import { notFound } from '../../../src/runtime/http-error.js'
import type { Kernel, KernelOptions } from '../../../src/runtime/kernel.js'
import { FwResponse, json } from '../../../src/runtime/response.js'
import { REPO_ROOT } from '../../support/project.js'
import { bootKernel, call, cleanupTempDirs, serve, type Register } from './support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/', () => json({ ok: true }), 'home')
  r.get('/later', async () => json({ ok: true }), 'later')
  r.get('/missing', () => {
    throw notFound('No such thing')
  })
  r.get('/own', () => json({}).withHeader('Strict-Transport-Security', 'max-age=0'), 'own')
  // A body that fails before its first byte: the adapter asks the boundary for the 500 then.
  r.get(
    '/stream-fails',
    () =>
      new FwResponse(
        200,
        {},
        new Readable({
          read() {
            setImmediate(() => this.destroy(new Error('the file cannot be read')))
          },
        }),
      ),
  )
}

const production = (options: Partial<KernelOptions> = {}): Promise<Kernel> =>
  bootKernel(routes, { env: 'production', hsts: true, ...options })
const HTTPS = { 'x-forwarded-proto': 'https' }
const STS = 'strict-transport-security'

/** `kernel` over real TLS (the fixture certificate); GET `path`, the status and STS header. */
async function overTls(kernel: Kernel, path: string): Promise<[number, unknown]> {
  const tls = join(REPO_ROOT, 'test', 'fixtures', 'tls')
  const server = attachKernel(
    createHttpsServer({
      key: readFileSync(join(tls, 'key.pem')),
      cert: readFileSync(join(tls, 'cert.pem')),
    }),
    () => kernel,
  )
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  try {
    const { port } = server.address() as AddressInfo
    return await new Promise((resolve, reject) => {
      const options = { host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }
      httpsRequest(options, (res) => {
        res.resume()
        res.on('end', () => resolve([res.statusCode!, res.headers[STS]]))
      })
        .on('error', reject)
        .end()
    })
  } finally {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
}

describe('in production', () => {
  it('says Strict-Transport-Security over TLS, 180 days, without includeSubDomains', async () => {
    const kernel = await production()
    expect(await overTls(kernel, '/')).toEqual([200, 'max-age=15552000'])
    expect(await overTls(kernel, '/missing')).toEqual([404, 'max-age=15552000'])
  })

  it('says it behind a trusted TLS proxy, on answers made later and on errors', async () => {
    const server = await serve(await production())
    try {
      for (const path of ['/', '/later', '/missing', '/nowhere', '/stream-fails']) {
        const reply = await server.send('GET', path, { headers: HTTPS })
        expect(reply.headers[STS], path).toBe('max-age=15552000')
      }
    } finally {
      await server.close()
    }
  })

  it('never over plain http: the 301 carries none', async () => {
    const server = await serve(await production())
    try {
      const reply = await server.send('GET', '/')
      expect(reply.status).toBe(301)
      expect(reply.headers[STS]).toBeUndefined()
    } finally {
      await server.close()
    }
  })

  it('never for X-Forwarded-Proto from a proxy that is not trusted', async () => {
    const kernel = await production()
    const response = await call(kernel, {
      uri: '/',
      headers: HTTPS,
      server: { REMOTE_ADDR: '203.0.113.9' },
    })
    expect(response.status).toBe(301)
    expect(response.header(STS)).toBeUndefined()
  })

  it("keeps the handler's own value", async () => {
    const kernel = await production()
    const response = await call(kernel, { uri: '/own', headers: HTTPS })
    expect(response.headers[STS]).toBe('max-age=0')
  })

  it('takes maxAge, includeSubDomains and preload from the hsts option; false sends none', async () => {
    const cases: [KernelOptions['hsts'], string | undefined][] = [
      [true, 'max-age=15552000'],
      [{ maxAge: 0 }, 'max-age=0'],
      [{ includeSubDomains: true }, 'max-age=15552000; includeSubDomains'],
      [
        { maxAge: 63_072_000, includeSubDomains: true, preload: true },
        'max-age=63072000; includeSubDomains; preload',
      ],
      [false, undefined],
    ]
    for (const [hsts, expected] of cases) {
      const kernel = await production({ hsts })
      const response = await call(kernel, { uri: '/', headers: HTTPS })
      expect(response.header(STS), JSON.stringify(hsts)).toBe(expected)
    }
  })

  it('sends none unless the hsts option asks for it', async () => {
    for (const hsts of [undefined, false]) {
      const kernel = await bootKernel(routes, { env: 'production', hsts })
      expect(await overTls(kernel, '/'), String(hsts)).toEqual([200, undefined])
    }
  })

  it('sends none with the builtins off (no HTTPS redirect either)', async () => {
    const kernel = await production({ builtins: false })
    expect(await overTls(kernel, '/')).toEqual([200, undefined])
  })
})

describe('outside production', () => {
  it('sends none, over TLS too', async () => {
    for (const env of ['development', 'test'] as const) {
      const kernel = await bootKernel(routes, { env, hsts: { includeSubDomains: true } })
      expect(await overTls(kernel, '/')).toEqual([200, undefined])
    }
  })
})

describe('the hsts option', () => {
  it.each([
    ['yes', 'hsts must be true, false or { maxAge, includeSubDomains, preload }, not "yes"'],
    [{ maxage: 60 }, 'Kernel.boot() hsts: unknown option `maxage` — did you mean `maxAge`?'],
    [{ maxAge: -1 }, 'hsts.maxAge must be a whole number of seconds, 0 or more, not -1'],
    [{ maxAge: '60' }, 'hsts.maxAge must be a whole number of seconds, 0 or more, not "60"'],
    [{ preload: 'true' }, 'hsts.preload must be true or false, not "true"'],
    [
      { maxAge: 31_536_000, preload: true },
      'hsts.preload needs includeSubDomains: true (hstspreload.org)',
    ],
    [
      { includeSubDomains: true, preload: true },
      'hsts.preload needs a maxAge of 31536000 (a year) or more, not 15552000 (the default)',
    ],
    [
      { maxAge: 86_400, includeSubDomains: true, preload: true },
      'hsts.preload needs a maxAge of 31536000 (a year) or more, not 86400',
    ],
  ])('refuses %j at boot, in any environment', async (hsts, message) => {
    for (const env of ['production', 'development'] as const) {
      await expect(
        bootKernel(routes, { env, hsts: hsts as KernelOptions['hsts'] }),
      ).rejects.toMatchObject({ name: 'FwError', code: 'FW_SERVE_CONFIG', message })
    }
  })
})
