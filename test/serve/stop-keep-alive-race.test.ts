/**
 * A stop under keep-alive load: a client's next request, already on its way down a connection
 * that was idle when the stop came, is answered (saying `Connection: close`), not reset. The
 * drain closed idle connections at once, and every connection of a client under load got
 * ECONNRESET (16 of 16 in an ops run), which a load balancer turns into 502s.
 */
import { connect } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer } from '../../src/serve/server.js'
import { bootKernel, cleanupTempDirs } from '../runtime/kernel/support.js'

afterAll(cleanupTempDirs)

const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'

describe('fw serve stopping while a keep-alive client sends its next request', () => {
  it('answers it with Connection: close, then closes the connection', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/', () => ({ ok: true }), 'home')
    })
    const running = await startServer(kernel, { port: 0, host: '127.0.0.1' })
    const port = Number(new URL(running.url).port)
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
    socket.on('error', () => {})
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write(REQUEST)
    await expect.poll(() => received.includes('{"ok":true}')).toBe(true)
    received = ''
    // The connection is idle now; the stop comes, and the next request right behind it.
    const stopped = running.close()
    socket.write(REQUEST)
    await closed
    await stopped
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(received.toLowerCase()).toContain('connection: close\r\n')
    expect(received).toContain('{"ok":true}')
  })

  it('closes a connection that stays idle once the grace is over, and the stop completes', async () => {
    const kernel = await bootKernel((r) => {
      r.get('/', () => ({ ok: true }), 'home')
    })
    const running = await startServer(kernel, { port: 0, host: '127.0.0.1' })
    const socket = connect(Number(new URL(running.url).port), '127.0.0.1')
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
    socket.on('error', () => {})
    const events: string[] = []
    const closed = new Promise<void>((resolve) =>
      socket.on('close', () => resolve(void events.push('closed'))),
    )
    socket.write(REQUEST)
    await expect.poll(() => received.includes('{"ok":true}')).toBe(true)
    const stopping = running.close()
    // Timers of this process fire in the order they are due, however busy it is: the connection
    // is closed after half the 1 s grace, and before half the 10 s drain deadline.
    const marks = [
      setTimeout(() => events.push('half the grace'), 500),
      setTimeout(() => events.push('half the drain deadline'), 5_000),
    ]
    await stopping
    await closed
    marks.forEach(clearTimeout)
    expect(events).toEqual(['half the grace', 'closed'])
    expect(running.server.listening).toBe(false)
  })
})
