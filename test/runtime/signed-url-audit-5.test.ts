/**
 * Signed URLs are verified on what the handler reads. The query was decoded with
 * decodeURIComponent, which gives up on a whole value with one malformed escape, while the
 * request's query() decodes the valid escapes beside it: `v=%41%ZZ` verified as the signed
 * `v=%2541%25ZZ` and the handler read `A%ZZ`. The path was compared byte for byte, so a client
 * or proxy that wrote an escape another way (`%c3%bc`, `%7E`) got a 403 for a URL the router
 * reads the same, and one with a trailing slash (the same route to the router) got a 403 too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './kernel/support.js'
import type { Kernel } from '../../src/runtime/kernel.js'

let kernel: Kernel
let server: Served

beforeAll(async () => {
  kernel = await bootKernel((r) => {
    r.get('/notes/{name}', (req: FwRequest, name: string) => ({ name, v: req.query('v') }), {
      name: 'notes.show',
      middleware: ['verifySignedUrl'],
    })
  })
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('signed URL verification', () => {
  it('refuses a query value rewritten into one the handler reads differently (403)', async () => {
    const url = kernel.signer.signedUrlFor('notes.show', { name: 'x' }, { v: '%41%ZZ' })
    expect(url).toContain('v=%2541%25ZZ')
    const signed = await server.send('GET', url)
    expect(signed.status).toBe(200)
    expect(JSON.parse(signed.text)).toMatchObject({ v: '%41%ZZ' })

    const tampered = await server.send('GET', url.replace('v=%2541%25ZZ', 'v=%41%ZZ'))
    expect(tampered.status).toBe(403)
    expect(JSON.parse(tampered.text)).toMatchObject({ error: 'Invalid URL signature', code: 403 })
  })

  it('accepts a path whose escapes are written in lower case or decoded where unreserved', async () => {
    const url = kernel.signer.signedUrlFor('notes.show', { name: 'ü~a' }, { v: 'ü' })
    const [path, query] = url.split('?') as [string, string]
    expect(path).toBe('/notes/%C3%BC~a')
    for (const variant of ['/notes/%c3%bc~a', '/notes/%C3%BC%7Ea', '/notes/%C3%BC~%61']) {
      const reply = await server.send('GET', `${variant}?${query}`)
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toMatchObject({ name: 'ü~a', v: 'ü' })
    }
    // A reserved escape is no unreserved character: `%2F` stays apart from `/`.
    const other = kernel.signer.signedUrlFor('notes.show', { name: 'a/b' })
    expect(other).toContain('/notes/a%2Fb')
    expect((await server.send('GET', other.replace('%2F', '%2f'))).status).toBe(200)
  })

  it('accepts the path with a trailing slash, as the router matches it, and nothing else', async () => {
    const url = kernel.signer.temporaryUrlFor('notes.show', { name: 'x' }, { v: '1' }, 60)
    const [path, query] = url.split('?') as [string, string]
    const slashed = await server.send('GET', `${path}/?${query}`)
    expect(slashed.status).toBe(200)
    expect(JSON.parse(slashed.text)).toMatchObject({ name: 'x', v: '1' })
    expect((await server.send('GET', `/notes/y/?${query}`)).status).toBe(403)
    expect((await server.send('GET', `${path}//?${query}`)).status).not.toBe(200)
  })
})
