/**
 * Audit of the container, providers, class handlers, the request scope and views, over real HTTP.
 * Regressions: a tag given the same key again (a provider run at each boot of `fw serve --watch`
 * with the container of the kernel options) ran its middleware once more per request; a
 * [Class, 'method'] handler whose bound instance lacks the method failed with "Cannot read
 * properties of undefined"; a 'Key@method' handler whose entry an async factory made failed as
 * having "no method", and when that factory rejected the process ended (an unhandled rejection),
 * its rejected promise kept for every later get; an async generator streamed as a body saw,
 * through currentRequest(), the request as it arrived (no request id, route parameters or
 * middleware attributes); a view a middleware answered was sent as an empty page.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import { currentRequest, Kernel } from '../../../src/runtime/kernel.js'
import { silentLogger } from '../../../src/runtime/logger.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { stream, view } from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { TemplateViews } from '../../../src/runtime/views.js'
import {
  bootKernel,
  buildCacheFor,
  captureLogger,
  cleanupTempDirs,
  serve,
  type Register,
} from './support.js'

afterAll(cleanupTempDirs)

const withUser: Middleware = (request, next) => next(request.withAttribute('user', 'ada'))

describe('handler results', () => {
  it("names a [Class, 'method'] handler whose instance from the container lacks the method", async () => {
    class Reports {
      show(): string {
        return 'report'
      }
    }
    const log = captureLogger()
    const container = new Container().set('Reports', { list: () => 'not show' })
    const server = await serve(
      await bootKernel((r) => r.get('/report', [Reports, 'show']), { container, log }),
    )
    try {
      const reply = await server.send('GET', '/report')
      expect(reply.status).toBe(500)
      expect(reply.text).not.toContain('show')
      const logged = log.lines.find((line) => line.level === 'error')?.obj as { err: Error }
      expect(logged.err.message).toBe(
        `Handler [Reports, 'show']: the instance has no method "show"`,
      )
    } finally {
      await server.close()
    }
  })
})

describe('async factories', () => {
  it('builds a singleton whose promise rejected again at the next get, as one that threw', async () => {
    let built = 0
    const container = new Container().singleton('db', async () => {
      if (++built === 1) throw new Error('db down')
      return 'connected'
    })
    await expect(container.get('db')).rejects.toThrow('db down')
    expect(await container.get('db')).toBe('connected')
    expect(container.get('db')).toBe(container.get('db'))
    expect(built).toBe(2)
  })

  it("answers 500 naming the slip, and the process lives on, when 'Key@method' names an async factory's entry", async () => {
    const rejections: unknown[] = []
    const seen = (reason: unknown): void => void rejections.push(reason)
    process.on('unhandledRejection', seen)
    const log = captureLogger()
    const container = new Container()
      .singleton('Failing', async () => {
        throw new Error('db down')
      })
      .singleton('Pending', async () => ({ show: () => 'never' }))
    const server = await serve(
      await bootKernel(
        (r) => {
          r.get('/failing', 'Failing@show')
          r.get('/pending', 'Pending@show')
        },
        { container, log },
      ),
    )
    try {
      for (const path of ['/failing', '/pending', '/failing']) {
        const reply = await server.send('GET', path)
        expect(reply.status).toBe(500)
        expect(JSON.parse(reply.text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(rejections).toEqual([])
      const reasons = log.lines.map((line) => (line.obj as { err: Error }).err.message)
      expect(reasons[1]).toBe(
        `Handler "Pending@show": "Pending" is a promise (an async factory): bind its value in boot()`,
      )
    } finally {
      process.off('unhandledRejection', seen)
      await server.close()
    }
  })
})

describe('tags', () => {
  it('holds a key once, however often it is tagged', () => {
    const container = new Container().set('a', 1).set('b', 2)
    container.tag('pre', 'a', 'b').tag('pre', 'a').tag('pre', 'b', 'b')
    expect(container.tagged('pre')).toEqual([1, 2])
  })

  it('runs tagged middleware once per request after a reboot on the same container (fw serve --watch)', async () => {
    let runs = 0
    const audit: Middleware = (request, next) => {
      runs++
      return next(request)
    }
    const provider = {
      register(kernel: Kernel): void {
        kernel.container.set('audit', audit).tag('pre', 'audit')
      },
    }
    const register: Register = (r) => r.get('/', () => 'ok')
    const options = {
      routeCache: await buildCacheFor(register),
      register,
      log: silentLogger,
      env: 'test' as const,
      container: new Container(),
      serviceProviders: [provider],
      preGlobalTags: ['pre'],
    }
    await Kernel.boot(options)
    const server = await serve(await Kernel.boot(options))
    try {
      expect((await server.send('GET', '/')).status).toBe(200)
      expect(runs).toBe(1)
    } finally {
      await server.close()
    }
  })
})

describe('the request scope in a streamed body', () => {
  // What the handler's request carries: its id, a middleware's attribute, its route parameter.
  const seen = (): string => {
    const request = currentRequest()
    if (request === undefined) return 'none'
    const params = request.getAttribute('route.params') as { id?: string } | null
    return `${String(request.getAttribute('user'))}:${params?.id ?? '-'}:${request.getAttribute('request_id') !== null}`
  }

  it('is the handler request in an async generator, also for chunks read as the socket drains', async () => {
    const big = 'x'.repeat(64 * 1024)
    const server = await serve(
      await bootKernel(
        (r) => {
          r.get(
            '/gen/{id}',
            () =>
              (async function* () {
                yield `${seen()}\n`
                await new Promise((resolve) => setTimeout(resolve, 2))
                yield `${seen()}\n`
              })(),
            { middleware: [withUser] },
          )
          // Megabytes: the later chunks are read when the client's socket drains.
          r.get(
            '/big/{id}',
            async () => {
              await null
              return stream(
                (async function* () {
                  for (let i = 0; i < 64; i++) yield `${seen()}${big}\n`
                })(),
              )
            },
            { middleware: [withUser] },
          )
        },
        { requestScopeEnabled: true },
      ),
    )
    try {
      expect((await server.send('GET', '/gen/7')).text).toBe('ada:7:true\nada:7:true\n')
      const lines = (await server.send('GET', '/big/8')).text.trimEnd().split('\n')
      expect(lines).toHaveLength(64)
      expect(new Set(lines.map((line) => line.slice(0, line.indexOf('x'))))).toEqual(
        new Set(['ada:8:true']),
      )
    } finally {
      await server.close()
    }
  })

  it('keeps parallel requests apart', async () => {
    const server = await serve(
      await bootKernel(
        (r) =>
          r.get(
            '/p/{id}',
            () =>
              (async function* () {
                await new Promise((resolve) => setTimeout(resolve, Math.random() * 10))
                yield seen()
              })(),
            { middleware: [withUser] },
          ),
        { requestScopeEnabled: true },
      ),
    )
    try {
      const ids = Array.from({ length: 20 }, (_, i) => String(i))
      const replies = await Promise.all(ids.map((id) => server.send('GET', `/p/${id}`)))
      expect(replies.map((reply) => reply.text)).toEqual(ids.map((id) => `ada:${id}:true`))
    } finally {
      await server.close()
    }
  })
})

describe('views a middleware answers', () => {
  it("renders them as a handler's (a maintenance page, a login form), and rescues one that fails", async () => {
    const views = new TemplateViews({ templates: { page: '<h1>{{ title }}</h1>' } })
    const maintenance: Middleware = () => view('page', { title: 'Back <soon>' }, 503)
    // An outer layer sees the body the view rendered to.
    let seenBody: unknown
    const outer: Middleware = async (request, next) => {
      const response = await next(request)
      seenBody = response.body
      return response
    }
    const loginPage: Middleware = (request, next) =>
      request.getPath() === '/login' ? view('page', { title: 'Log in' }) : next(request)
    const server = await serve(
      await bootKernel(
        (r) => {
          r.get('/down', () => 'handler', { middleware: [outer, maintenance] })
          r.get('/broken', () => 'handler', {
            middleware: [async () => view('no-such-view')],
          })
        },
        {
          views,
          preGlobal: [loginPage],
        },
      ),
    )
    try {
      const down = await server.send('GET', '/down')
      expect([down.status, down.headers['content-type'], down.text]).toEqual([
        503,
        'text/html; charset=utf-8',
        '<h1>Back &lt;soon&gt;</h1>',
      ])
      expect(seenBody).toBe('<h1>Back &lt;soon&gt;</h1>')
      // Before routing: a path no route has.
      const login = await server.send('GET', '/login')
      expect([login.status, login.text]).toEqual([200, '<h1>Log in</h1>'])
      const broken = await server.send('GET', '/broken')
      expect(broken.status).toBe(500)
      expect(JSON.parse(broken.text)).toMatchObject({ error: 'Internal Server Error', code: 500 })
    } finally {
      await server.close()
    }
  })
})

describe('views in production', () => {
  it('never reads outside the views, and a failed view shows no path to the client', async () => {
    const log = captureLogger()
    const views = new TemplateViews({
      dir: '/nonexistent-views',
      templates: { ok: '<p>{{ v }}</p>' },
    })
    const server = await serve(
      await bootKernel(
        (r) => r.get('/page', (req: FwRequest) => view(String(req.query('name')), { v: '<x>' })),
        { env: 'production', log, views },
      ),
    )
    const https = { headers: { 'x-forwarded-proto': 'https' } }
    try {
      const ok = await server.send('GET', '/page?name=ok', https)
      expect([ok.status, ok.headers['content-type'], ok.text]).toEqual([
        200,
        'text/html; charset=utf-8',
        '<p>&lt;x&gt;</p>',
      ])
      for (const name of ['../../etc/passwd', '..', 'a/../ok', '/etc/passwd', 'missing']) {
        const reply = await server.send('GET', `/page?name=${encodeURIComponent(name)}`, https)
        expect(reply.status).toBe(500)
        expect(reply.text).not.toMatch(/nonexistent|passwd|views|ENOENT/)
      }
      const reasons = log.lines.map((line) => (line.obj as { err?: Error }).err?.message ?? '')
      expect(reasons.filter((reason) => reason.startsWith('Invalid view name'))).toHaveLength(4)
      expect(reasons.at(-1)).toContain('ENOENT')
    } finally {
      await server.close()
    }
  })
})
