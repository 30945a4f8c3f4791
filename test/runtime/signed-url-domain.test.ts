/**
 * A signed URL of a route with a domain is bound to its host. Signed as its path alone (payload
 * mode `relative`, the default), a link made for one tenant (`acme.example.test/invoice/1`)
 * verified on every other tenant's host, and its handler ran with the other tenant's placeholder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../src/runtime/request/request.js'
import type { Kernel } from '../../src/runtime/kernel.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'

let kernel: Kernel
let server: Served

beforeAll(async () => {
  kernel = await bootKernel((r) => {
    r.group({ domain: '{account}.example.test' }, (r) => {
      r.get(
        '/invoice/{id:int}',
        (req: FwRequest, account: string, id: number) => ({ account, id }),
        {
          name: 'invoice',
          middleware: ['verifySignedUrl'],
        },
      )
    })
    // A domain route without a name (a group's routes often have none).
    r.group({ domain: '{shop}.shops.test' }, (r) => {
      r.get('/invoice/{id:int}', (req: FwRequest, shop: string, id: number) => ({ shop, id }), {
        middleware: ['verifySignedUrl'],
      })
    })
    r.get('/invoice/{id:int}', (req: FwRequest, id: number) => ({ id, tenant: null }), {
      name: 'invoice.plain',
      middleware: ['verifySignedUrl'],
    })
    r.get('/notes/{id:int}', (req: FwRequest, id: number) => ({ id }), {
      name: 'notes',
      middleware: ['verifySignedUrl'],
    })
  })
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

const on = (host: string) => ({ headers: { host } })

describe('signed URLs of domain routes', () => {
  it('verify on the host they were made for, and on no other tenant’s (403)', async () => {
    const url = kernel.signer.signedUrlFor('invoice', { account: 'acme', id: 1 })
    expect(url).toMatch(/^\/invoice\/1\?_sig=[0-9a-f]{64}$/)

    const own = await server.send('GET', url, on('acme.example.test'))
    expect(own.status).toBe(200)
    expect(JSON.parse(own.text)).toEqual({ account: 'acme', id: 1 })

    const other = await server.send('GET', url, on('evil.example.test'))
    expect(other.status).toBe(403)
    expect(JSON.parse(other.text)).toMatchObject({ error: 'Invalid URL signature' })
  })

  it('do not take the signature of a route without a domain that has the same path', async () => {
    const url = kernel.signer.signedUrlFor('invoice.plain', { id: 7 })
    expect(url).toMatch(/^\/invoice\/7\?_sig=[0-9a-f]{64}$/)
    // Routing tries the tenant's route first on a tenant's host: it must not take this link.
    for (const host of ['acme.example.test', 'victim.example.test', 'acme.shops.test']) {
      const reply = await server.send('GET', url, on(host))
      expect(reply.status, host).toBe(403)
    }
    const own = await server.send('GET', url, on('localhost'))
    expect([own.status, JSON.parse(own.text)]).toEqual([200, { id: 7, tenant: null }])
  })

  it('bind the host however the client spells it, and not its port or scheme', async () => {
    const url = kernel.signer.temporaryUrlFor('invoice', { account: 'acme', id: 2 }, {}, 300)
    for (const host of ['ACME.example.test', 'acme.example.test.', 'acme.example.test:8080']) {
      const reply = await server.send('GET', url, on(host))
      expect(reply.status, host).toBe(200)
    }
  })

  it('hold for the absolute URL the helper gives, on its own host only', async () => {
    const url = kernel.signer.signedUrlFor('invoice', { account: 'acme', id: 3 }, {}, null, true)
    const { pathname, search, host } = new URL(url)
    expect(host).toBe('acme.example.test')
    expect((await server.send('GET', pathname + search, on(host))).status).toBe(200)
    expect((await server.send('GET', pathname + search, on('evil.example.test'))).status).toBe(403)
  })

  it('leave a route without a domain signed by its path, valid on any host', async () => {
    const url = kernel.signer.signedUrlFor('notes', { id: 4 })
    for (const host of ['a.example.test', 'b.example.test']) {
      expect((await server.send('GET', url, on(host))).status).toBe(200)
    }
  })
})
