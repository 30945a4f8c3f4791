/**
 * Signed URLs of domain routes are signed as `//host/path?query` (payload mode `relative`), and
 * the verifier also read the request's path alone as a payload. A request path that begins with
 * `//`, `//acme.example.test/invoice/1`, is then word for word the payload of acme's link: sent
 * to another tenant's host, a route that takes such a path (a root catch-all) ran with acme's
 * signature. Also: URLs of constraints that take `1,2` or `a@b.c` as they are verify, in both
 * payload modes, and the other spelling of the same value does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../src/runtime/request/request.js'
import type { Kernel } from '../../src/runtime/kernel.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'

let kernel: Kernel
let server: Served

beforeAll(async () => {
  kernel = await bootKernel((r) => {
    r.get('/posts/{ids:[0-9]+(,[0-9]+)*}', (req: FwRequest, ids: string) => ({ ids }), {
      name: 'posts',
      middleware: ['verifySignedUrl'],
    })
    r.get('/m/{e:(?<=/m/)[^/@]+@[^/@]+}', (req: FwRequest, e: string) => ({ e }), {
      name: 'mail',
      middleware: ['verifySignedUrl'],
    })
    r.group({ domain: '{account}.example.test' }, (r) => {
      r.get(
        '/invoice/{id:int}',
        (req: FwRequest, account: string, id: number) => ({ account, id }),
        { name: 'invoice', middleware: ['verifySignedUrl'] },
      )
      r.get('/{path:.*}', (req: FwRequest, account: string, path: string) => ({ account, path }), {
        name: 'tenant.files',
        middleware: ['verifySignedUrl'],
      })
    })
    r.get('/open', (req: FwRequest) => ({ q: req.query() }), 'open')
    r.get('/signed-q', (req: FwRequest) => ({ q: req.query() }), {
      name: 'signed-q',
      middleware: ['verifySignedUrl'],
    })
    r.get('/{rest:.*}', (req: FwRequest, rest: string) => ({ rest }), {
      name: 'fallback',
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

describe('a tenant’s signed URL', () => {
  it('does not verify on another host behind a path that starts with //host (403)', async () => {
    const url = kernel.signer.signedUrlFor('invoice', { account: 'acme', id: 1 })
    expect((await server.send('GET', url, on('acme.example.test'))).status).toBe(200)

    const replayed = await server.send('GET', `//acme.example.test${url}`, on('evil.example.test'))
    expect(replayed.status).toBe(403)
    expect(JSON.parse(replayed.text)).toMatchObject({ error: 'Invalid URL signature' })
    // On a host without a domain route, the root catch-all takes the path: 403 there too.
    const elsewhere = await server.send('GET', `//acme.example.test${url}`, on('other.test'))
    expect(elsewhere.status).toBe(403)
  })

  it('of a tenant catch-all neither', async () => {
    const url = kernel.signer.temporaryUrlFor(
      'tenant.files',
      { account: 'acme', path: 'a/b' },
      {},
      60,
    )
    const own = await server.send('GET', url, on('acme.example.test'))
    expect(JSON.parse(own.text)).toEqual({ account: 'acme', path: 'a/b' })
    const replayed = await server.send('GET', `//acme.example.test${url}`, on('evil.example.test'))
    expect(replayed.status).toBe(403)
  })

  it('leaves links of routes without a domain as they were', async () => {
    const url = kernel.signer.signedUrlFor('fallback', { rest: 'x/y' })
    expect(url).toMatch(/^\/x\/y\?_sig=/)
    const reply = await server.send('GET', url, on('any.test'))
    expect(JSON.parse(reply.text)).toEqual({ rest: 'x/y' })
  })
})

describe('signed URLs of values a constraint takes in another spelling', () => {
  it('verify as built, relative and absolute, and not in the other spelling', async () => {
    const url = kernel.signer.signedUrlFor('posts', { ids: '1,2' }, { q: 'a b' }, 60)
    expect(url).toMatch(/^\/posts\/1,2\?q=a%20b&_exp=\d+&_sig=/)
    const reply = await server.send('GET', url, on('localhost'))
    expect(JSON.parse(reply.text)).toEqual({ ids: '1,2' })
    expect((await server.send('GET', url.replace('1,2', '1%2C2'))).status).not.toBe(200)

    const absolute = kernel.signer.signedUrlFor('mail', { e: 'a@b.c' }, {}, null, true, 'absolute')
    const { pathname, search, host } = new URL(absolute)
    expect(pathname).toBe('/m/a@b.c')
    expect((await server.send('GET', pathname + search, on(host))).status).toBe(200)
    expect((await server.send('GET', pathname + search, on('evil.test'))).status).toBe(403)
  })
})

describe('a signed URL with a URLSearchParams or Map query', () => {
  it('signs every entry, a repeated key as a list, and the URL verifies', async () => {
    const query = new URLSearchParams('tag=a&tag=b&page=2')
    const url = kernel.signer.signedUrlFor('posts', { ids: '1,2' }, query, 60)
    expect(url).toMatch(
      /^\/posts\/1,2\?tag%5B0%5D=a&tag%5B1%5D=b&page=2&_exp=\d+&_sig=[0-9a-f]{64}$/,
    )
    expect((await server.send('GET', url)).status).toBe(200)
    const mapped = kernel.signer.signedUrlFor('posts', { ids: '3' }, new Map([['page', 2]]))
    expect(mapped).toMatch(/^\/posts\/3\?page=2&_sig=/)
    expect((await server.send('GET', mapped)).status).toBe(200)
  })

  it('refuses _sig or _exp in it, as in an object', () => {
    const forged = new URLSearchParams('_sig=00')
    expect(() => kernel.signer.signedUrlFor('posts', { ids: '1' }, forged)).toThrow(
      '_sig and _exp are reserved for signed URLs',
    )
  })
})

describe('a URLSearchParams query with the list syntax c[] given twice (review)', () => {
  const search = (): URLSearchParams => new URLSearchParams('c[]=2&c[]=3&p=1')

  it('urlFor writes it so that the handler reads what its own toString() gives', async () => {
    const direct = JSON.parse((await server.send('GET', `/open?${search().toString()}`)).text).q
    expect(direct).toEqual({ c: ['2', '3'], p: '1' })
    const url = kernel.urlFor('open', {}, search())
    expect(url).toBe('/open?c%5B0%5D=2&c%5B1%5D=3&p=1')
    expect(JSON.parse((await server.send('GET', url)).text).q).toEqual(direct)
  })

  it('a signed URL of it verifies and reads the same', async () => {
    const response = await server.send(
      'GET',
      kernel.signer.signedUrlFor('signed-q', {}, search(), 60),
    )
    expect(response.status).toBe(200)
    expect(JSON.parse(response.text).q).toMatchObject({ c: ['2', '3'], p: '1' })
  })
})
