/**
 * `getSignal()`: aborted when the client leaves before the response is sent (over real HTTP/1.1
 * and HTTP/2, also after the body was read and for a response queued behind a pipelined one),
 * never after a complete response; a web Request's own signal; the test factory's. A handler or
 * a streamed body that stops on it is no failure to log.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import http2 from 'node:http2'
import { once } from 'node:events'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import type { KernelOptions } from '../../../src/runtime/kernel.js'
import { attachKernel } from '../../../src/runtime/node-adapter.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { json, stream } from '../../../src/runtime/response.js'
import { bootKernel, captureLogger, type Register } from '../kernel/support.js'

const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  await Promise.all(closers.map((close) => close()))
})

/** A promise with its resolve function, to wait for an event without sleeping. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

function abortOf(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason)
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)))
}

function listen(server: Server | http2.Http2Server): Promise<number> {
  closers.push(
    () =>
      new Promise((resolve) => {
        ;(server as Server).closeAllConnections?.()
        server.close(() => resolve())
      }),
  )
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )
}

/** A kernel served by `attachKernel` on a node:http server, and the close of its next connection. */
async function serveHttp(
  register: Register,
  options: Partial<KernelOptions> = {},
): Promise<{ port: number; socketClosed: () => Promise<void> }> {
  const kernel = await bootKernel(register, options)
  const server = attachKernel(createServer(), () => kernel)
  // Who waits for the close of the next connection accepted (each test opens one at a time).
  const waiting: (() => void)[] = []
  server.on('connection', (socket: Socket) => {
    const resolve = waiting.shift()
    if (resolve) socket.once('close', resolve)
  })
  const port = await listen(server)
  const socketClosed = (): Promise<void> => new Promise((resolve) => waiting.push(resolve))
  return { port, socketClosed }
}

/** Opens a connection, writes `text`, and returns the socket (its answer is ignored). */
function send(port: number, text: string): Socket {
  const socket = connect(port, '127.0.0.1', () => socket.write(text))
  socket.on('error', () => {})
  socket.resume()
  return socket
}

/** A GET through node:http's client on its own connection; the whole answer as text. */
function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve(text))
    })
    req.on('error', reject)
    req.end()
  })
}

const REASON = {
  name: 'AbortError',
  message: 'The client closed the connection before the response was sent',
}

/** The signals handlers report, taken in arrival order (none lost to a race). */
function arrivals(): {
  push: (signal: AbortSignal) => void
  take: (n?: number) => Promise<AbortSignal[]>
} {
  const items: AbortSignal[] = []
  let wake = (): void => {}
  return {
    push: (signal) => {
      items.push(signal)
      wake()
    },
    take: async (n = 1) => {
      while (items.length < n) await new Promise<void>((resolve) => (wake = resolve))
      return items.splice(0, n)
    },
  }
}

describe('getSignal() over HTTP/1.1 (attachKernel)', () => {
  const seen = { wait: arrivals(), read: arrivals(), quick: arrivals(), keep: arrivals() }
  const routes: Register = (r) => {
    r.get('/wait', async (req: FwRequest) => {
      const signal = req.getSignal()
      seen.wait.push(signal)
      await abortOf(signal)
      return 'too late'
    })
    r.post('/read-then-wait', async (req: FwRequest) => {
      const signal = req.getSignal()
      expect(req.input('name')).toBe('Ada')
      seen.read.push(signal)
      await abortOf(signal)
      return 'too late'
    })
    r.get('/quick', (req: FwRequest) => {
      seen.quick.push(req.getSignal())
      return json({ ok: true })
    })
    r.get('/keep', (req: FwRequest) => {
      // Asked only after the response: the request kept, its signal read later.
      setImmediate(() => seen.keep.push(req.getSignal()))
      return 'kept'
    })
  }

  it('aborts while a handler waits, when the client destroys its socket', async () => {
    const { port } = await serveHttp(routes)
    const socket = send(port, 'GET /wait HTTP/1.1\r\nHost: x\r\n\r\n')
    const [signal] = await seen.wait.take()
    expect(signal!.aborted).toBe(false)
    socket.destroy()
    const reason = await abortOf(signal!)
    expect(reason).toBeInstanceOf(DOMException)
    expect(reason).toMatchObject(REASON)
  })

  it('aborts after the handler read the body (Node no longer fails the request then)', async () => {
    const { port } = await serveHttp(routes)
    const body = '{"name":"Ada"}'
    const socket = send(
      port,
      `POST /read-then-wait HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    )
    const [signal] = await seen.read.take()
    socket.destroy()
    expect(await abortOf(signal!)).toMatchObject(REASON)
  })

  it('aborts for a response queued behind a pipelined one (no close of its own)', async () => {
    const { port } = await serveHttp(routes)
    const socket = send(port, 'GET /wait HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(2))
    const signals = await seen.wait.take(2)
    socket.destroy()
    for (const signal of signals) expect(await abortOf(signal)).toMatchObject(REASON)
  })

  it('is not aborted after a complete response, nor once the connection closes', async () => {
    const { port, socketClosed } = await serveHttp(routes)
    const closed = socketClosed()
    expect(await get(port, '/quick')).toBe('{"ok":true}')
    await closed
    const [signal] = await seen.quick.take()
    expect(signal!.aborted).toBe(false)
  })

  it('is not aborted when first asked after a complete response', async () => {
    const { port, socketClosed } = await serveHttp(routes)
    const closed = socketClosed()
    expect(await get(port, '/keep')).toBe('kept')
    await closed
    const [signal] = await seen.keep.take()
    expect(signal!.aborted).toBe(false)
  })

  it('is one signal for the request and the copies with* makes', async () => {
    let same: boolean[] = []
    const { port } = await serveHttp((r) => {
      r.get('/copies', (req: FwRequest) => {
        const signal = req.getSignal()
        same = [
          req.withAttribute('a', 1).getSignal() === signal,
          req.withHeader('x-a', 'b').getSignal() === signal,
          req.withUri('/other?x=1').getSignal() === signal,
          req.withParsedBody({ a: 1 }).getSignal() === signal,
        ]
        return 'ok'
      })
    })
    expect(await get(port, '/copies')).toBe('ok')
    expect(same).toEqual([true, true, true, true])
  })
})

describe('a handler or streamed body that stops on the signal', () => {
  it('is answered without an error logged (fetch() rejects with the reason)', async () => {
    // An upstream that never answers: the handler waits on it until its own client leaves.
    const upstream = createServer(() => {})
    const upstreamPort = await listen(upstream)
    const log = captureLogger()
    const rendered = deferred<HttpError>()
    const waiting = deferred()
    const { port } = await serveHttp(
      (r) => {
        r.get('/proxy', async (req: FwRequest) => {
          waiting.resolve()
          await fetch(`http://127.0.0.1:${upstreamPort}/`, { signal: req.getSignal() })
          return 'never'
        })
      },
      {
        log,
        errorRenderer: (error) => {
          rendered.resolve(error)
          return json({ error: error.message }, error.status)
        },
      },
    )
    const socket = send(port, 'GET /proxy HTTP/1.1\r\nHost: x\r\n\r\n')
    // The client leaves once the handler's fetch() reached the upstream.
    upstream.on('request', () => waiting.promise.then(() => socket.destroy()))
    const error = await rendered.promise
    expect(error.status).toBe(499)
    expect(error.cause).toMatchObject(REASON)
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([])
  })

  it("is answered without an error logged (a Node API's AbortError caused by it)", async () => {
    const log = captureLogger()
    const rendered = deferred<HttpError>()
    const waiting = deferred()
    const { port } = await serveHttp(
      (r) => {
        r.get('/sleep', async (req: FwRequest) => {
          // timers/promises rejects with an AbortError of its own, the reason as its cause.
          const slept = sleep(60_000, undefined, { signal: req.getSignal() })
          waiting.resolve()
          await slept
          return 'never'
        })
      },
      {
        log,
        errorRenderer: (error) => {
          rendered.resolve(error)
          return json({ error: error.message }, error.status)
        },
      },
    )
    const socket = send(port, 'GET /sleep HTTP/1.1\r\nHost: x\r\n\r\n')
    await waiting.promise
    socket.destroy()
    const error = await rendered.promise
    expect(error.status).toBe(499)
    expect((error.cause as Error).cause).toMatchObject(REASON)
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([])
  })

  it("is a logged 500 in another request still waiting, not its client's 499", async () => {
    // Work shared by concurrent requests (a fetch deduplicated across them), started with the
    // first one's signal: when that client leaves, the second request fails, its client there.
    const log = captureLogger()
    let shared: Promise<string> | null = null
    const arrivedAt = arrivals()
    const { port } = await serveHttp(
      (r) => {
        r.get('/shared', (req: FwRequest) => {
          const signal = req.getSignal()
          shared ??= abortOf(signal).then((reason) => Promise.reject(reason))
          arrivedAt.push(signal)
          return shared
        })
      },
      { log },
    )
    const first = send(port, 'GET /shared HTTP/1.1\r\nHost: x\r\n\r\n')
    await arrivedAt.take()
    const second = get(port, '/shared').catch(() => 'failed')
    await arrivedAt.take()
    first.destroy()
    expect(await second).toContain('Internal Server Error')
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'error' }))
  })

  it('stops a streamed generator, with nothing logged', async () => {
    const log = captureLogger()
    const started = deferred()
    const stopped = deferred<unknown>()
    const { port } = await serveHttp(
      (r) => {
        r.get('/feed', (req: FwRequest) => {
          const signal = req.getSignal()
          return stream(
            (async function* () {
              yield 'first\n'
              started.resolve()
              try {
                // A wait that only the signal ends (an upstream read given the signal).
                await abortOf(signal)
                signal.throwIfAborted()
                yield 'never\n'
              } catch (error) {
                stopped.resolve(error)
                throw error
              }
            })(),
          )
        })
      },
      { log },
    )
    const socket = send(port, 'GET /feed HTTP/1.1\r\nHost: x\r\n\r\n')
    await started.promise
    socket.destroy()
    expect(await stopped.promise).toMatchObject(REASON)
    // The stream's end is handled in the same turn as the abort: flush a macrotask to let any
    // log line it would write come, then check there is none.
    await new Promise((resolve) => setImmediate(resolve))
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([])
  })

  it('stops a streamed Readable destroyed with the reason, with nothing logged', async () => {
    const log = captureLogger()
    const body = new Readable({ read() {} })
    const { port } = await serveHttp(
      (r) => {
        r.get('/feed', (req: FwRequest) => {
          const signal = req.getSignal()
          signal.addEventListener('abort', () => body.destroy(signal.reason as Error))
          body.push('first\n')
          return stream(body)
        })
      },
      { log },
    )
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET /feed HTTP/1.1\r\nHost: x\r\n\r\n'),
    )
    socket.on('error', () => {})
    const failed = once(body, 'error')
    // (events.once would reject on the 'error' before it.)
    const closed = new Promise((resolve) => body.once('close', resolve))
    // Left once the first chunk arrived: the status line and headers are sent.
    socket.once('data', () => socket.destroy())
    const [error] = await failed
    expect(error).toMatchObject(REASON)
    await closed
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([])
  })
})

describe('getSignal() over HTTP/2 (attachKernel, compatibility API)', () => {
  it('aborts when the client resets the stream, and not after a complete response', async () => {
    const entered = { wait: deferred<AbortSignal>(), quick: deferred<AbortSignal>() }
    const kernel = await bootKernel((r) => {
      r.get('/wait', async (req: FwRequest) => {
        entered.wait.resolve(req.getSignal())
        await abortOf(req.getSignal())
        return 'too late'
      })
      r.get('/quick', (req: FwRequest) => {
        entered.quick.resolve(req.getSignal())
        return 'quick'
      })
    })
    const port = await listen(attachKernel(http2.createServer(), () => kernel))
    const client = http2.connect(`http://127.0.0.1:${port}`)
    client.on('error', () => {})
    try {
      const quick = client.request({ ':path': '/quick' })
      quick.resume()
      await new Promise((resolve) => quick.on('close', resolve))
      const waiting = client.request({ ':path': '/wait' })
      waiting.on('error', () => {})
      const signal = await entered.wait.promise
      waiting.close(http2.constants.NGHTTP2_CANCEL)
      expect(await abortOf(signal)).toMatchObject(REASON)
      // The completed request's stream closed before the second one began.
      expect((await entered.quick.promise).aborted).toBe(false)
    } finally {
      client.close()
    }
  })
})

describe('getSignal() of requests made otherwise', () => {
  it('FwRequest.fromNode(req) without its response still sees a client that leaves', async () => {
    const seen = deferred<AbortSignal>()
    const server = createServer((req) => seen.resolve(FwRequest.fromNode(req).getSignal()))
    const port = await listen(server)
    const socket = send(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    const signal = await seen.promise
    socket.destroy()
    expect(await abortOf(signal)).toMatchObject(REASON)
  })

  it('FwRequest.fromNode(req, options, beforeBody, res): not aborted after the response', async () => {
    const seen = deferred<AbortSignal>()
    const server = createServer((req, res) => {
      seen.resolve(FwRequest.fromNode(req, undefined, undefined, res).getSignal())
      res.end('done')
    })
    const port = await listen(server)
    expect(await get(port, '/')).toBe('done')
    expect((await seen.promise).aborted).toBe(false)
  })

  it("a WHATWG Request's own signal passes through", () => {
    const controller = new AbortController()
    const request = FwRequest.fromWeb(
      new Request('http://example.test/a', { signal: controller.signal }),
    )
    const signal = request.getSignal()
    expect(request.withAttribute('a', 1).getSignal()).toBe(signal)
    expect(signal.aborted).toBe(false)
    const reason = new Error('host says the client left')
    controller.abort(reason)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(reason)
  })

  it('a Request-like object without a signal of this realm gets one (none, or one following it)', () => {
    // node-fetch's Request has a null signal; another realm's or library's is no AbortSignal here.
    const like = { url: 'http://example.test/a', method: 'GET', headers: new Headers(), body: null }
    const none = FwRequest.fromWeb({ ...like, signal: null } as unknown as Request).getSignal()
    expect(none).toBeInstanceOf(AbortSignal)
    expect(none.aborted).toBe(false)
    const foreign = Object.assign(new EventTarget(), {
      aborted: false,
      reason: undefined as unknown,
    })
    const following = FwRequest.fromWeb({
      ...like,
      signal: foreign,
    } as unknown as Request).getSignal()
    expect(following).toBeInstanceOf(AbortSignal)
    expect(following.aborted).toBe(false)
    const reason = new Error('the host says the client left')
    Object.assign(foreign, { aborted: true, reason })
    foreign.dispatchEvent(new Event('abort'))
    expect(following.reason).toBe(reason)
  })

  it("the test factory's never aborts unless the test passes one", () => {
    const request = FwRequest.create({ uri: '/a' })
    const signal = request.getSignal()
    expect(signal).toBeInstanceOf(AbortSignal)
    expect(signal.aborted).toBe(false)
    expect(request.withHeader('x-a', 'b').withAttribute('a', 1).getSignal()).toBe(signal)
    expect(FwRequest.create().getSignal()).not.toBe(signal)

    const controller = new AbortController()
    const given = FwRequest.create({ uri: '/b', signal: controller.signal })
    expect(given.getSignal()).toBe(controller.signal)
    controller.abort()
    expect(given.withQueryParams({ q: '1' }).getSignal().aborted).toBe(true)
  })

  it('the test factory refuses a signal that is no AbortSignal', () => {
    expect(() => FwRequest.create({ signal: {} as AbortSignal })).toThrow(
      new TypeError('FwRequest.create(): `signal` must be an AbortSignal'),
    )
  })
})
