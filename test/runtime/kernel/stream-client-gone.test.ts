/**
 * A stream answered after its client went away (the handler was still awaiting when the
 * connection closed): nothing will read it, and a 'close' listener added to the closed response
 * never fires, so the stream must be destroyed at once (its producer, a database cursor or an
 * upstream fetch, released), as file-client-gone.test.ts checks for a file's descriptor. Two
 * mechanisms hold this, each enough alone: the request's hold on a streamed answer (released
 * when the response closes) and the send path's `res.destroyed` check.
 */
import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it, vi } from 'vitest'
import { create } from '../../../src/runtime/response.js'
import { bootKernel, serve } from './support.js'

describe('a stream answered to a client that left', () => {
  it('is destroyed at once', async () => {
    const bodies: Readable[] = []
    const kernel = await bootKernel((r) => {
      r.get('/slow-stream', async () => {
        await delay(80)
        let sent = 0
        const body = new Readable({
          read() {
            this.push(sent++ < 1000 ? Buffer.alloc(1024) : null)
          },
        })
        bodies.push(body)
        return create(body, 200, { 'content-type': 'application/octet-stream' })
      })
    })
    const server = await serve(kernel)
    try {
      const abort = (): Promise<void> =>
        new Promise((resolve) => {
          const socket = connect(server.port, '127.0.0.1', () => {
            socket.write('GET /slow-stream HTTP/1.1\r\nHost: x\r\n\r\n')
            setTimeout(() => socket.destroy(), 10)
          })
          socket.on('close', () => resolve())
        })
      await Promise.all(Array.from({ length: 5 }, abort))
      await vi.waitFor(() => expect(bodies).toHaveLength(5), { timeout: 5000, interval: 10 })
      await vi.waitFor(
        () => expect(bodies.map((body) => body.destroyed)).toEqual([true, true, true, true, true]),
        { timeout: 2000, interval: 25 },
      )
    } finally {
      await server.close()
    }
  })
})
