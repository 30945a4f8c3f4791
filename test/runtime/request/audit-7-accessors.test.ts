/**
 * Regression tests from an audit of the request's URL, host and client-address accessors behind
 * proxies (session 7), over real HTTP:
 * - an X-Forwarded-For entry with a port (`203.0.113.7:5678`, as Azure's front ends send it) or
 *   in brackets (`[2001:db8::1]:4711`) was no address to proxy-addr, so client_ip was the proxy's
 *   own: every client behind it shared one address and one throttle budget;
 * - a Host that HOST's grammar let through but no URL can hold (`[.]`, `999.999.999.999`) made
 *   getUri() and the production HTTPS redirect's Location malformed URLs;
 * - an HTTP/1.0 request without Host, to a server listening on `::`, was named by the local
 *   address as the socket gives it: `http://[::ffff:127.0.0.1]:port/`.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createListener } from '../../../src/runtime/node-adapter.js'
import { compileTrust } from '../../../src/runtime/request/options.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { rawExchange } from '../../support/raw-http.js'
import {
  bootKernel,
  cleanupTempDirs,
  serve,
  type Register,
  type Served,
} from '../kernel/support.js'

const routes: Register = (r) => {
  r.get('/ip', (request: FwRequest) => ({ client_ip: request.getAttribute('client_ip') }))
  r.get('/uri', (request: FwRequest) => ({ uri: request.getUri(), host: request.getHost() }))
}

let served: Served
let production: Served

beforeAll(async () => {
  const trustProxy = compileTrust('loopback, 10.0.0.0/8')
  served = await serve(await bootKernel(routes, { request: { trustProxy } }))
  production = await serve(await bootKernel(routes, { env: 'production' }))
})

afterAll(async () => {
  await served.close()
  await production.close()
  cleanupTempDirs()
})

describe('X-Forwarded-For entries with a port, from trusted proxies', () => {
  const clientIp = async (forwarded: string): Promise<unknown> => {
    const reply = await served.send('GET', '/ip', { headers: { 'x-forwarded-for': forwarded } })
    expect(reply.status).toBe(200)
    return JSON.parse(reply.text).client_ip
  }

  it('name the client without the port or the IPv6 brackets', async () => {
    expect(await clientIp('203.0.113.7:5678')).toBe('203.0.113.7')
    expect(await clientIp('[2001:db8::1]:4711')).toBe('2001:db8::1')
    expect(await clientIp('[2001:db8::2]')).toBe('2001:db8::2')
    expect(await clientIp(' 203.0.113.8:80 , 198.51.100.9 ')).toBe('198.51.100.9')
  })

  it('are walked through when the hop so written is a trusted proxy', async () => {
    expect(await clientIp('198.51.100.7, 10.1.2.3:443')).toBe('198.51.100.7')
    // An untrusted hop still stops the walk, port or not.
    expect(await clientIp('198.51.100.7, 192.0.2.1:443, 10.1.2.3')).toBe('192.0.2.1')
  })

  it('leave entries that are no address as before: the hop that passed them on', async () => {
    expect(await clientIp('unknown:80')).toBe('127.0.0.1')
    expect(await clientIp('[nope]:1')).toBe('127.0.0.1')
    expect(await clientIp('::ffff:203.0.113.7')).toBe('203.0.113.7')
  })
})

describe('a Host no URL can hold', () => {
  const exchange = async (server: Served, host: string) => {
    const reply = await rawExchange(server.port, [
      'GET /uri?x=1 HTTP/1.1',
      `Host: ${host}`,
      'Connection: close',
    ])
    const location = /\r\nlocation: ([^\r]*)/i.exec(reply)?.[1]
    return { status: Number(reply.slice(9, 12)), location, body: reply.split('\r\n\r\n')[1] }
  }

  it.each(['[.]', '[::::]', '[1:2]', '999.999.999.999', '1.2.3.4.5:8080'])(
    '%s is a 400, never a malformed getUri() or redirect Location',
    async (host) => {
      expect((await exchange(served, host)).status).toBe(400)
      const redirected = await exchange(production, host)
      expect(redirected).toMatchObject({ status: 400, location: undefined })
    },
  )

  it.each([
    ['[::1]:8080', 'http://[::1]:8080/uri?x=1', 'https://[::1]/uri?x=1'],
    [
      '[::FFFF:192.0.2.1]',
      'http://[::ffff:192.0.2.1]/uri?x=1',
      'https://[::ffff:192.0.2.1]/uri?x=1',
    ],
    ['127.1', 'http://127.1/uri?x=1', 'https://127.1/uri?x=1'],
    ['192.0.2.1.', 'http://192.0.2.1/uri?x=1', 'https://192.0.2.1/uri?x=1'],
    ['web-01:3000', 'http://web-01:3000/uri?x=1', 'https://web-01/uri?x=1'],
  ])('%s still answers, with a URL that parses', async (host, uri, location) => {
    const answered = await exchange(served, host)
    expect(answered.status).toBe(200)
    expect(JSON.parse(answered.body!).uri).toBe(uri)
    expect(() => new URL(uri)).not.toThrow()
    const redirected = await exchange(production, host)
    expect(redirected).toMatchObject({ status: 301, location })
    expect(() => new URL(location)).not.toThrow()
  })
})

describe('an HTTP/1.0 request without Host, to a server listening on ::', () => {
  it('is named by the plain IPv4 address it arrived on, as getClientAddress() names the peer', async () => {
    const kernel = await bootKernel(routes)
    const server = createServer(createListener(() => kernel))
    await new Promise<void>((resolve) => server.listen(0, '::', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const reply = await rawExchange(port, ['GET /uri HTTP/1.0'])
      expect(JSON.parse(reply.split('\r\n\r\n')[1]!)).toEqual({
        uri: `http://127.0.0.1:${port}/uri`,
        host: '127.0.0.1',
      })
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('withUri() on a request a trusted proxy forwarded', () => {
  it("takes the new URI's scheme and host, not the proxy's X-Forwarded-Proto/-Host/-Port", () => {
    const forwarded = FwRequest.create({
      uri: 'http://app.internal/a',
      headers: {
        host: 'app.internal',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'proxy.example',
        'x-forwarded-port': '8443',
      },
    })
    expect(forwarded.getUri()).toBe('https://proxy.example:8443/a')
    const moved = forwarded.withUri('http://new.example:8080/b?x=1')
    expect([moved.getUri(), moved.getScheme(), moved.getHost(), moved.getPort()]).toEqual([
      'http://new.example:8080/b?x=1',
      'http',
      'new.example',
      8080,
    ])
    // The Host kept (preserveHost): the proxy's host stays; the scheme is the URI's.
    expect(forwarded.withUri('http://new.example/c', true).getUri()).toBe(
      'http://proxy.example:8443/c',
    )
    // A relative target changes the path only.
    expect(forwarded.withUri('/d').getUri()).toBe('https://proxy.example:8443/d')
    expect(forwarded.getUri()).toBe('https://proxy.example:8443/a')
  })
})
