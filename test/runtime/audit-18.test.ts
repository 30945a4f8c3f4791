/**
 * Audit of the send timeout and the CLI's stray-error printer.
 *
 * - A response guarded by sendTimeoutMs left its timeout on the socket once sent: the next
 *   response on the connection (a pipelined request whose handler takes longer than the timeout)
 *   had its connection closed under it, without a word and without an answer.
 * - A package's error that nothing caught was printed as the app's (FW_APP_UNCAUGHT) at a place
 *   inside Node, `/timers:581:17`, read from the frame `node:internal/timers:581:17`.
 */
import { connect } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { create } from '../../src/runtime/response.js'
import { cleanupProjects, makeProject, runFw } from '../support/project.js'
import { bootKernel, cleanupTempDirs, serve } from './kernel/support.js'

afterAll(cleanupTempDirs)
afterAll(cleanupProjects)

const BODY_BYTES = 16 * 1024 * 1024 // more than the socket takes at once: the guard is set
const STALL_MS = 300

/** Sends `payload` on one connection and reads until `done` holds or the connection closes. */
function exchange(port: number, payload: string, done: (text: string) => boolean) {
  return new Promise<{ text: string; closedEarly: boolean }>((resolve) => {
    let tail = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(payload))
    socket.on('data', (chunk: Buffer) => {
      // Only the end is kept as text: the large body is all 'a'.
      tail = (tail + chunk.toString('latin1')).slice(-4096)
      if (done(tail)) {
        socket.destroy()
        resolve({ text: tail, closedEarly: false })
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve({ text: tail, closedEarly: true }))
  })
}

describe('a connection after a response guarded by sendTimeoutMs', () => {
  it('answers a pipelined request whose handler takes longer than the timeout', async () => {
    const kernel = await bootKernel(
      (r) => {
        r.get('/big', () => create(Buffer.alloc(BODY_BYTES, 97)))
        r.get('/slow', async () => {
          await delay(STALL_MS * 3)
          return create('slow done')
        })
      },
      { sendTimeoutMs: STALL_MS },
    )
    const server = await serve(kernel)
    try {
      const pipelined = 'GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n'
      const reply = await exchange(server.port, pipelined, (text) => text.endsWith('slow done'))
      expect(reply.closedEarly).toBe(false)
      expect(reply.text).toMatch(/HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nslow done$/)
    } finally {
      await server.close()
    }
  })
})

describe("a package's error that nothing catches", () => {
  it("keeps Node's default report: it is no error of the app, and has no place in it", async () => {
    const dir = makeProject({
      'node_modules/flaky-db/package.json':
        '{ "name": "flaky-db", "type": "module", "main": "index.js" }',
      'node_modules/flaky-db/index.js':
        "export const ready = Promise.reject(new Error('flaky-db refused'))\n",
      'routes.ts':
        "import { ready } from 'flaky-db'\n" +
        "export default (r) => {\n  r.get('/', () => String(ready))\n}\n",
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toMatch(/FW_APP_UNCAUGHT/)
    expect(result.stderr).toMatch(
      /Error: flaky-db refused\n\s+at .*node_modules\/flaky-db\/index\.js/,
    )
  })

  it("still names the app's own line when the app threw", async () => {
    const dir = makeProject({
      'routes.ts':
        "export const ready = Promise.reject(new Error('refused'))\n" +
        "export default (r) => {\n  r.get('/', () => 'home')\n}\n",
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr.split('\n')[0]).toBe(
      'error routes.ts:1:37: Unhandled promise rejection: refused [FW_APP_UNCAUGHT]',
    )
  })
})
