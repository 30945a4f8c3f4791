/**
 * Request scope under concurrency: with requestScopeEnabled, every place a request's own code
 * runs (middleware before and after next, the handler across awaits and timers, a streamed
 * generator body, the error renderer, container.get('request')) sees that request, never
 * another's, over keep-alive, pipelined and in-process requests alike.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { get as httpGet, Agent, request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { connect } from 'node:net'
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { currentRequest, Kernel } from '../../src/runtime/kernel.js'
import { HttpError } from '../../src/runtime/http-error.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { create, json } from '../../src/runtime/response.js'
import type { Middleware } from '../../src/runtime/types.js'
import { temporaryUrlFor, urlFor } from '../../src/runtime/app.js'
import { bootKernel, cleanupTempDirs, jsonOf, serve, textOf } from './kernel/support.js'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT } from '../support/project.js'
import { serveApp } from '../support/server.js'

afterAll(cleanupTempDirs)
afterAll(cleanupProjects)

const tagOf = (request: FwRequest | undefined): string =>
  request === undefined ? 'undefined' : request.getHeaderLine('x-tag') || 'none'

describe('request scope under concurrency', () => {
  it('keeps hundreds of concurrent keep-alive, pipelined and in-process requests apart', async () => {
    const wrong: string[] = []
    const check = (where: string, tag: string): void => {
      const seen = tagOf(currentRequest())
      if (seen !== tag) wrong.push(`${where}: ${tag} saw ${seen}`)
    }
    let kernel!: Kernel
    const pre: Middleware = async (request, next) => {
      const tag = tagOf(request)
      check('pre.before', tag)
      await sleep(Math.random() * 3)
      check('pre.awaited', tag)
      await new Promise<void>((done) => setImmediate(() => (check('pre.immediate', tag), done())))
      const response = await next(request.withAttribute('pre', tag))
      check('pre.after', tag)
      if (kernel.container.get<FwRequest>('request') !== request) wrong.push(`pre.container ${tag}`)
      return response
    }
    kernel = await bootKernel(
      (r) => {
        r.get(
          '/t/{id}',
          async (request: FwRequest, id: string) => {
            const tag = tagOf(request)
            if (tag !== id) wrong.push(`path ${id} tag ${tag}`)
            check('handler', tag)
            await immediate()
            check('handler.immediate', tag)
            await new Promise<void>((done) =>
              setTimeout(() => (check('handler.timeout', tag), done()), Math.random() * 3),
            )
            process.nextTick(() => check('handler.tick', tag))
            queueMicrotask(() => check('handler.microtask', tag))
            const fromContainer = kernel.container.get<FwRequest>('request')
            if (fromContainer !== request) wrong.push(`handler.container ${tag}`)
            if (currentRequest()?.getAttribute('pre') !== tag) wrong.push(`pre attr ${tag}`)
            return json({
              tag,
              id: currentRequest()?.getAttribute('request_id'),
              url: urlFor('t', { id }),
            })
          },
          't',
        )
        r.get(
          '/g/{id}',
          (request: FwRequest) => {
            const tag = tagOf(request)
            return create(
              (async function* () {
                for (let i = 0; i < 3; i++) {
                  await sleep(Math.random() * 2)
                  check(`gen.${i}`, tag)
                  yield `${tagOf(currentRequest())};`
                }
              })(),
            )
          },
          'g',
        )
        r.get(
          '/e/{id}',
          async () => {
            await sleep(Math.random() * 2)
            throw new HttpError(422, { message: 'nope' })
          },
          'e',
        )
      },
      {
        requestScopeEnabled: true,
        preGlobal: [pre],
        errorRenderer: async (error, context) => {
          const tag = tagOf(currentRequest())
          await sleep(Math.random() * 2)
          check('renderer', tag)
          if (context.path !== `/e/${tag}`) wrong.push(`renderer path ${context.path} tag ${tag}`)
          if (currentRequest()?.getAttribute('request_id') !== context.requestId)
            wrong.push(`renderer request id ${tag}`)
          return json({ tag }, error.status)
        },
      },
    )
    const served = await serve(kernel)
    const agent = new Agent({ keepAlive: true, maxSockets: 8 })
    const get = (
      path: string,
      tag: string,
    ): Promise<{ status: number; text: string; id: string }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: served.port, path, agent, headers: { 'x-tag': tag } },
          (res) => {
            let text = ''
            res.on('data', (c: Buffer) => (text += c.toString()))
            res.on('end', () =>
              resolve({ status: res.statusCode!, text, id: String(res.headers['x-request-id']) }),
            )
          },
        )
        req.on('error', reject)
        req.end()
      })
    try {
      const jobs: Array<Promise<void>> = []
      for (let i = 0; i < 300; i++) {
        const tag = `k${i}`
        const kind = i % 3
        if (kind === 0)
          jobs.push(
            get(`/t/${tag}`, tag).then((reply) => {
              const body = JSON.parse(reply.text)
              if (body.tag !== tag || body.id !== reply.id || body.url !== `/t/${tag}`)
                wrong.push(`reply ${tag}: ${reply.text}`)
            }),
          )
        else if (kind === 1)
          jobs.push(
            get(`/g/${tag}`, tag).then((reply) => {
              if (reply.text !== `${tag};${tag};${tag};`) wrong.push(`gen ${tag}: ${reply.text}`)
            }),
          )
        else
          jobs.push(
            get(`/e/${tag}`, tag).then((reply) => {
              if (reply.status !== 422 || JSON.parse(reply.text).tag !== tag)
                wrong.push(`error ${tag}: ${reply.status} ${reply.text}`)
            }),
          )
        // In process, interleaved.
        const inTag = `p${i}`
        jobs.push(
          kernel
            .handle(FwRequest.create({ uri: `/t/${inTag}`, headers: { 'x-tag': inTag } }))
            .then(async (response) => {
              const body = await jsonOf(response)
              if (body.tag !== inTag) wrong.push(`in-process ${inTag}: ${JSON.stringify(body)}`)
            }),
        )
      }
      // Pipelined: 40 requests in one write on one connection, answered in order.
      jobs.push(
        new Promise<void>((resolve, reject) => {
          const socket = connect(served.port, '127.0.0.1', () => {
            let head = ''
            for (let i = 0; i < 40; i++) {
              const tag = i % 2 === 0 ? `q${i}` : `q${i}`
              const path = i % 4 === 1 ? `/g/${tag}` : `/t/${tag}`
              head += `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Tag: ${tag}\r\n${i === 39 ? 'Connection: close\r\n' : ''}\r\n`
            }
            socket.write(head)
          })
          let text = ''
          socket.on('data', (c: Buffer) => (text += c.toString()))
          socket.on('end', () => {
            for (let i = 0; i < 40; i++)
              // A generator's answer is chunked: its three pieces apart.
              if (i % 4 === 1 ? text.split(`q${i};`).length !== 4 : !text.includes(`"tag":"q${i}"`))
                wrong.push(`pipelined q${i}`)
            resolve()
          })
          socket.on('error', reject)
        }),
      )
      await Promise.all(jobs)
    } finally {
      agent.destroy()
      await served.close()
    }
    expect(wrong).toEqual([])
    expect(currentRequest()).toBeUndefined()
  }, 60_000)
})

describe('log lines and refusals under concurrency', () => {
  it("joins each error's log line and rendered refusal to its own request", async () => {
    const wrong: string[] = []
    const lines: Array<{ fields: Record<string, unknown>; scoped: unknown }> = []
    const keep =
      () =>
      (fields: object | string): void =>
        void lines.push({
          fields: fields as Record<string, unknown>,
          scoped: currentRequest()?.getAttribute('request_id'),
        })
    const kernel = await bootKernel(
      (r) => {
        r.get(
          '/boom/{id}',
          async () => {
            await sleep(Math.random() * 3)
            throw new Error('boom')
          },
          'boom',
        )
        r.get('/limited/{id}', () => 'ok', { name: 'limited', middleware: ['throttle:5,60'] })
      },
      {
        requestScopeEnabled: true,
        log: { debug: keep(), info: keep(), warn: keep(), error: keep() },
        errorRenderer: async (error, context) => {
          await sleep(Math.random() * 2)
          const current = currentRequest()
          if (
            current?.getPath() !== context.path ||
            current.getHeaderLine('x-request-id') !== context.requestId
          )
            wrong.push(`renderer ${context.path} saw ${current?.getPath()}`)
          return json({ id: context.requestId }, error.status)
        },
      },
    )
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const path = i % 2 === 0 ? `/boom/${i}` : `/limited/x`
        const id = `req-${i}`
        const response = await kernel.handle(
          FwRequest.create({ uri: path, headers: { 'x-request-id': id } }),
        )
        if (response.status !== 200 && (await jsonOf(response)).id !== id)
          wrong.push(`answer ${id}`)
      }),
    )
    const boom = lines.filter((line) => line.fields.path?.toString().startsWith('/boom/'))
    expect(boom).toHaveLength(100)
    for (const { fields, scoped } of boom) {
      if (fields.request_id !== `req-${String(fields.path).slice(6)}`)
        wrong.push(`line ${String(fields.path)} has ${String(fields.request_id)}`)
      if (scoped !== fields.request_id) wrong.push(`logged in the scope of ${String(scoped)}`)
    }
    expect(wrong).toEqual([])
  })
})

describe('two kernels in one process', () => {
  // The URL helpers used whichever kernel booted last: a handler of the first kernel got links
  // to routes of the second (or a UrlGenerationError) and URLs signed with its keys, which its
  // own verifySignedUrl refused.
  it('gives each request the URL helpers of the kernel handling it', async () => {
    const app = (prefix: string, key: string): Promise<Kernel> =>
      bootKernel(
        (r) => {
          r.get(
            `/${prefix}/link/{id}`,
            async (_request: FwRequest, id: string) => {
              await sleep(Math.random() * 3)
              return json({
                link: urlFor(`${prefix}.link`, { id }),
                signed: temporaryUrlFor(`${prefix}.signed`, { id }, {}, 300),
              })
            },
            `${prefix}.link`,
          )
          r.get(`/${prefix}/signed/{id}`, (_request: FwRequest, id: string) => `${prefix}:${id}`, {
            name: `${prefix}.signed`,
            middleware: ['verifySignedUrl'],
          })
        },
        { requestScopeEnabled: true, signingKeys: [key] },
      )
    const first = await app('a', 'key-of-a')
    const second = await app('b', 'key-of-b')
    const wrong: string[] = []
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const [kernel, prefix] = i % 2 === 0 ? [first, 'a'] : [second, 'b']
        const response = await kernel.handle(FwRequest.create({ uri: `/${prefix}/link/${i}` }))
        const body = response.status === 200 ? await jsonOf(response) : null
        if (body?.link !== `/${prefix}/link/${i}`)
          return void wrong.push(`${prefix}${i}: ${response.status} ${await textOf(response)}`)
        const signed = await kernel.handle(FwRequest.create({ uri: body.signed }))
        if (signed.status !== 200 || (await textOf(signed)) !== `${prefix}:${i}`)
          wrong.push(`${prefix}${i} signed: ${signed.status}`)
      }),
    )
    expect(wrong).toEqual([])
  })

  it('keeps a request of a kernel without the scope, handled inside one with it, apart', async () => {
    const outer = await bootKernel(
      (r) => {
        r.get(
          '/outer',
          async () => {
            const response = await inner.handle(FwRequest.create({ uri: '/inner' }))
            // Back in its own request: the outer one again.
            return json({
              inner: await jsonOf(response),
              after: currentRequest()?.getPath() ?? null,
            })
          },
          'outer',
        )
      },
      { requestScopeEnabled: true },
    )
    let inner!: Kernel
    inner = await bootKernel((r) => {
      r.get(
        '/inner',
        () => {
          let link: string
          try {
            link = urlFor('inner')
          } catch (error) {
            link = String(error)
          }
          return json({ current: currentRequest()?.getPath() ?? null, link })
        },
        'inner',
      )
    })
    const response = await outer.handle(FwRequest.create({ uri: '/outer' }))
    expect(await jsonOf(response)).toEqual({
      inner: { current: null, link: '/inner' },
      after: '/outer',
    })
  })
})

// The in-flight request waits for the file "release"; "entered" says it is in its handler.
const WATCHED = (
  name: string,
  message: string,
): string => `import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { currentRequest, urlFor } from 'fw'
const at = (file) => new URL('./' + file, import.meta.url)
export default (r) => {
  r.get('/slow', async () => {
    writeFileSync(at('entered'), '')
    while (!existsSync(at('release'))) await new Promise((done) => setTimeout(done, 20))
    return { path: currentRequest()?.getPath() ?? null, link: urlFor('${name}'), message: '${message}' }
  }, '${name}')
  r.get('/message', () => ({ message: '${message}' }), 'message')
}
`

function getJson(url: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode, ...JSON.parse(text) }))
    }).on('error', reject)
  })
}

describe('fw serve --watch: a reload while a request is in flight', () => {
  it('leaves that request its scope and the URL helpers of the routes it runs on', async () => {
    assertBuilt()
    const dir = makeProject({
      'routes.mjs': WATCHED('slow.first', 'first'),
      'fw.config.mjs': 'export default { kernel: { requestScopeEnabled: true } }\n',
    })
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    const app = await serveApp(['--routes', 'routes.mjs', '--watch'], { cwd: dir })
    const waitFor = async (check: () => boolean | Promise<boolean>): Promise<void> => {
      const until = Date.now() + 40_000
      while (!(await check())) {
        if (Date.now() > until) throw new Error(`timed out; server output:\n${app.output()}`)
        await sleep(50)
      }
    }
    try {
      const inFlight = getJson(`${app.url}/slow`)
      await waitFor(() => existsSync(join(dir, 'entered')))
      // The route is renamed: the kernel that boots next has no 'slow.first'.
      writeFileSync(join(dir, 'routes.mjs'), WATCHED('slow.second', 'second'))
      await waitFor(async () => (await getJson(`${app.url}/message`)).message === 'second')
      writeFileSync(join(dir, 'release'), '')
      expect(await inFlight).toEqual({
        status: 200,
        path: '/slow',
        link: '/slow',
        message: 'first',
      })
    } finally {
      await app.stop()
    }
  }, 90_000)
})
