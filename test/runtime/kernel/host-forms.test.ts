/**
 * Host header forms RFC 3986 allows that name the same host: a trailing dot (the fully qualified
 * name) and an empty port (`host:`, the scheme's default). Both reach domain routes as the plain
 * host, over real HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { rawExchange } from '../../support/raw-http.js'
import { bootKernel, cleanupTempDirs, serve } from './support.js'

afterAll(cleanupTempDirs)

describe('Host header forms', () => {
  it('match domain routes with a trailing dot or an empty port, and getHost() names the host plainly', async () => {
    const kernel = await bootKernel((r) => {
      r.group({ domain: '{account}.localhost' }, (r) => {
        r.get('/whoami', (request: FwRequest, account: string) => ({
          account,
          host: request.getHost(),
          port: request.getPort(),
        }))
      })
    })
    const server = await serve(kernel)
    const exchange = async (host: string) => {
      const reply = await rawExchange(server.port, [
        'GET /whoami HTTP/1.1',
        `Host: ${host}`,
        'Connection: close',
      ])
      return {
        status: Number(reply.slice(9, 12)),
        body: JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)),
      }
    }
    try {
      const plain = { status: 200, body: { account: 'acme', host: 'acme.localhost', port: 80 } }
      expect(await exchange('acme.localhost')).toEqual(plain)
      expect(await exchange('acme.localhost.')).toEqual(plain)
      expect(await exchange('acme.localhost:')).toEqual(plain)
      expect(await exchange('ACME.localhost.:')).toEqual(plain)
      expect(await exchange('acme.localhost.:8080')).toEqual({
        ...plain,
        body: { ...plain.body, port: 8080 },
      })
      // Still refused: a name with an empty label.
      expect((await exchange('.')).status).toBe(400)
      expect((await exchange('acme..localhost')).status).toBe(400)
      expect((await exchange('acme.localhost..')).status).toBe(400)
    } finally {
      await server.close()
    }
  })
})
