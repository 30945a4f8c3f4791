/**
 * A request made by `FwRequest.fromWeb(request)` (a host that speaks WHATWG Request, handled
 * through `kernel.handle`): its signal is the Request's own, aborted by the host with a reason of
 * its choosing. A handler that gives up on it (fetch() rejects with the reason, timers/promises
 * with an AbortError caused by it) is answered 499 with nothing logged, as over node:http;
 * another request's reason is still a logged 500.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../../src/runtime/kernel.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { bootKernel, captureLogger, cleanupTempDirs } from '../kernel/support.js'

// An upstream that never answers: a fetch() to it ends only by its signal.
let upstream: Server
let upstreamUrl = ''
const log = captureLogger()
let kernel: Kernel
// Resolved when a handler is waiting on its request's signal.
let waiting: () => void = () => {}
// What the next /shared handler awaits: work started with another request's signal.
let shared: Promise<unknown> = Promise.resolve()

beforeAll(async () => {
  upstream = createServer(() => {})
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`
  kernel = await bootKernel(
    (r) => {
      r.get('/proxy', async (req: FwRequest) => {
        const answer = fetch(upstreamUrl, { signal: req.getSignal() })
        waiting()
        return (await answer).text()
      })
      r.get('/sleep', async (req: FwRequest) => {
        const slept = sleep(60_000, undefined, { signal: req.getSignal() })
        waiting()
        await slept
        return 'never'
      })
      r.get('/shared', async () => {
        waiting()
        return await shared
      })
    },
    { log },
  )
})

afterAll(async () => {
  upstream.closeAllConnections()
  await new Promise((resolve) => upstream.close(resolve))
  cleanupTempDirs()
})

/** Handles GET `path` made by fromWeb with `controller`'s signal, aborted once the handler waits. */
async function abortedWhileWaiting(path: string, reason?: unknown): Promise<number> {
  const controller = new AbortController()
  const started = new Promise<void>((resolve) => (waiting = resolve))
  const request = FwRequest.fromWeb(
    new Request(`http://app.test${path}`, { signal: controller.signal }),
  )
  const answer = kernel.handle(request)
  await started
  controller.abort(reason)
  return (await answer).status
}

const failures = (): unknown[] => log.lines.filter((l) => l.level === 'warn' || l.level === 'error')

describe('a fromWeb request whose host aborted it', () => {
  it('is a quiet 499 when the handler rethrows the reason fetch() rejected with', async () => {
    log.lines.length = 0
    // The default reason (a DOMException AbortError), an Error, and a string as Hono's Node
    // server aborts with.
    expect(await abortedWhileWaiting('/proxy')).toBe(499)
    expect(await abortedWhileWaiting('/proxy', new Error('the client left'))).toBe(499)
    expect(await abortedWhileWaiting('/proxy', 'Client connection prematurely closed.')).toBe(499)
    expect(failures()).toEqual([])
  })

  it("is a quiet 499 for timers/promises' AbortError caused by the reason", async () => {
    log.lines.length = 0
    expect(await abortedWhileWaiting('/sleep', new Error('the client left'))).toBe(499)
    expect(await abortedWhileWaiting('/sleep')).toBe(499)
    expect(failures()).toEqual([])
  })

  it("is a logged 500 for another request's reason, its own client still there", async () => {
    log.lines.length = 0
    const other = new AbortController()
    const reason = new Error('the first client left')
    shared = new Promise((_resolve, reject) =>
      other.signal.addEventListener('abort', () => reject(other.signal.reason)),
    )
    const started = new Promise<void>((resolve) => (waiting = resolve))
    const answer = kernel.handle(FwRequest.fromWeb(new Request('http://app.test/shared')))
    await started
    other.abort(reason)
    expect((await answer).status).toBe(500)
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 'error', obj: expect.objectContaining({ err: reason }) }),
    )
  })
})
