/**
 * The HTTP server `fw serve` runs: its timeouts as a client sees them (what it tells a keep-alive
 * client while draining is in stop-and-reload.test.ts, with a real slow request).
 */
import { Agent, get, type IncomingMessage } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/serve/server.js'
import { bootKernel, cleanupTempDirs } from '../runtime/kernel/support.js'

afterAll(cleanupTempDirs)

async function serve(): Promise<RunningServer> {
  const kernel = await bootKernel((r) => {
    r.get('/', () => ({ ok: true }), 'home')
  })
  return startServer(kernel, { port: 0, host: '127.0.0.1' })
}

function head(url: string, agent: Agent): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume().on('end', () => resolve(res))
    }).on('error', reject)
  })
}

describe('the fw serve HTTP server', () => {
  it('keeps idle connections longer than proxies do (65 s), and gives a request its headers within 20 s and its whole within 60 s', async () => {
    const running = await serve()
    const agent = new Agent({ keepAlive: true })
    try {
      const res = await head(`${running.url}/`, agent)
      expect(res.headers['keep-alive']).toBe('timeout=65')
      const { server } = running
      // Node measures the headers time from the request's first byte (not from when the
      // connection turned idle), and refuses a headers timeout over the request timeout.
      expect(server.headersTimeout).toBe(20_000)
      expect(server.requestTimeout).toBe(60_000)
      expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout)
    } finally {
      agent.destroy()
      await running.close()
    }
  })
})
