/**
 * Signed URLs (DESIGN "Signed URLs"): `_exp` and `_sig`, the verification order (400, 400, 403,
 * 410), canonical query order, key rotation, payloadMode 'absolute', reserved names, and the
 * `verifySignedUrl` alias through the kernel.
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedUrlFor, temporaryUrlFor, temporaryUrlUntil } from '../../../src/runtime/app.js'
import { HttpError } from '../../../src/runtime/http-error.js'
import type { Kernel } from '../../../src/runtime/kernel.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { UrlSigner, type PayloadMode } from '../../../src/runtime/signed-url.js'
import { bootKernel, call, cleanupTempDirs, jsonOf, type Register } from './support.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get('/files/{id:int}', (_request: unknown, id: number) => ({ id, signed: true }), {
    name: 'files.show',
    middleware: ['verifySignedUrl'],
  })
  r.get('/reports/{name}', (_request: unknown, name: string) => ({ name }), {
    name: 'reports.show',
    middleware: ['verifySignedUrl'],
  })
  r.get('/open', () => ({ open: true }), 'open')
}

let kernel: Kernel
let clock = 1_700_000_000
const now = (): number => clock

beforeAll(async () => {
  kernel = await bootKernel(routes, { signingKeys: ['current-key'] })
})

function signer(keys: string[]): UrlSigner {
  return new UrlSigner({ keys, urlFor: kernel.router.urlFor, now })
}

/** The status verification gives `url` (200 when it holds). */
function verdict(verifier: UrlSigner, url: string, host?: string): number {
  const request = FwRequest.create({ uri: url, headers: host ? { host } : {} })
  try {
    verifier.verify(request)
    return 200
  } catch (error) {
    if (error instanceof HttpError) return error.status
    throw error
  }
}

describe('signing', () => {
  it('signedUrlFor without a ttl has no _exp and verifies', () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 7 })
    expect(url).toMatch(/^\/files\/7\?_sig=[0-9a-f]{64}$/)
    expect(verdict(s, url)).toBe(200)
  })

  it('keeps the query and signs it, with _exp before _sig when a ttl is given', () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 7 }, { download: 1 }, 60)
    expect(url).toMatch(new RegExp(`^/files/7\\?download=1&_exp=${clock + 60}&_sig=[0-9a-f]{64}$`))
    expect(verdict(s, url)).toBe(200)
  })

  it('gives a full URL with absolute true', () => {
    const url = signer(['k1']).signedUrlFor('files.show', { id: 7 }, {}, null, true)
    expect(url).toMatch(/^http:\/\/localhost\/files\/7\?_sig=[0-9a-f]{64}$/)
  })

  // With a base path (an app behind a proxy that strips /app), relative signed URLs carried /app
  // and its signature covered it: the request, without /app, got 403.
  it('signs the route path and puts a base path of APP_URL only in absolute URLs', () => {
    const sign = (key: string, payload: string): string =>
      createHmac('sha256', key).update(payload).digest('hex')
    kernel.router.setBaseUrl('https://x.example/app/')
    try {
      const s = signer(['k1'])
      const relative = s.signedUrlFor('files.show', { id: 7 })
      expect(relative).toBe(`/files/7?_sig=${sign('k1', '/files/7')}`)
      expect(verdict(s, relative)).toBe(200)
      const absolute = s.signedUrlFor('files.show', { id: 7 }, {}, null, true)
      expect(absolute).toBe(`https://x.example/app/files/7?_sig=${sign('k1', '/files/7')}`)
      const pinned = s.signedUrlFor('files.show', { id: 7 }, {}, null, true, 'absolute')
      expect(pinned).toMatch(/^https:\/\/x\.example\/app\/files\/7\?_sig=/)
      expect(verdict(s, pinned.replace('https://x.example/app', ''), 'x.example')).toBe(403)
    } finally {
      kernel.router.setBaseUrl('http://localhost')
    }
  })

  it('refuses callers passing _sig or _exp themselves', () => {
    const s = signer(['k1'])
    expect(() => s.signedUrlFor('files.show', { id: 1 }, { _sig: 'x' })).toThrow(TypeError)
    expect(() => s.signedUrlFor('files.show', { id: 1 }, { _exp: 1 })).toThrow(TypeError)
    expect(() => s.temporaryUrlFor('files.show', { id: 1 }, { _exp: 1 }, 60)).toThrow(TypeError)
  })

  it('requires a positive ttl for temporaryUrlFor and at least one non-empty key', () => {
    expect(() => signer(['k1']).temporaryUrlFor('files.show', { id: 1 })).toThrow(RangeError)
    expect(() => signer(['k1']).temporaryUrlFor('files.show', { id: 1 }, {}, 0)).toThrow(RangeError)
    expect(() => signer([])).toThrow()
    expect(() => signer([''])).toThrow()
  })

  // A JavaScript caller passing the mode where the ttl goes got `_exp=1795674737absolute`,
  // a URL that verification then answered with 400.
  it('refuses a ttl or expiry that is not a number of seconds instead of signing it', () => {
    const s = signer(['k1']) as unknown as Record<string, (...args: unknown[]) => string>
    expect(() => s.signedUrlFor!('files.show', { id: 1 }, {}, 'absolute')).toThrow(TypeError)
    expect(() => s.signedUrlFor!('files.show', { id: 1 }, {}, Number.NaN)).toThrow(TypeError)
    expect(() => s.temporaryUrlFor!('files.show', { id: 1 }, {}, '60')).toThrow(TypeError)
    expect(() => s.temporaryUrlUntil!('files.show', 'tomorrow', { id: 1 })).toThrow(TypeError)
    expect(() => s.temporaryUrlUntil!('files.show', new Date('x'), { id: 1 })).toThrow(TypeError)
    expect(s.signedUrlFor!('files.show', { id: 1 }, {}, 60.7)).toMatch(/_exp=\d+&_sig=/)
  })
})

describe('regressions', () => {
  const sign = (key: string, payload: string): string =>
    createHmac('sha256', key).update(payload).digest('hex')

  // Arrays were signed as `tags=a&tags=b`, which the request reads back as 'b'.
  it('carries arrays and nested objects in bracketed keys that the request reads back, and still verifies', async () => {
    const s = signer(['k1'])
    const query = {
      tags: ['a', 'b c'],
      filter: { range: { from: 1, to: 2 }, ids: [3, 4] },
      page: 2,
    }
    const url = s.signedUrlFor('files.show', { id: 7 }, query, 60)
    const request = FwRequest.create({ uri: url })
    expect(request.getQueryParams()).toEqual({
      tags: ['a', 'b c'],
      filter: { range: { from: '1', to: '2' }, ids: ['3', '4'] },
      page: '2',
      _exp: String(clock + 60),
      _sig: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(verdict(s, url)).toBe(200)
    expect(verdict(s, url.replace('b%20c', 'b%20d'))).toBe(403)
    expect(verdict(s, url.replace('%5Bfrom%5D=1', '%5Bfrom%5D=9'))).toBe(403)
    // Literal brackets are the same key to the parser, so they verify too.
    expect(verdict(s, url.replaceAll('%5B', '[').replaceAll('%5D', ']'))).toBe(200)
    const kernelUrl = kernel.signer.signedUrlFor('files.show', { id: 7 }, query)
    expect((await call(kernel, kernelUrl)).status).toBe(200)
  })

  // The payload of a URL without a query was `path?`; DESIGN.md (and Laravel) sign the path alone.
  it('signs the path alone when the query is empty', async () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 7 })
    expect(url).toBe(`/files/7?_sig=${sign('k1', '/files/7')}`)
    expect(verdict(s, url)).toBe(200)
    expect(verdict(s, `/files/7?_sig=${sign('k1', '/files/7?')}`)).toBe(403)
    const kernelUrl = kernel.signer.signedUrlFor('files.show', { id: 7 })
    expect(kernelUrl).toBe(`/files/7?_sig=${sign('current-key', '/files/7')}`)
    expect((await call(kernel, kernelUrl)).status).toBe(200)
  })

  it("signs scheme, host and path alone in payloadMode 'absolute' when the query is empty", () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 7 }, {}, null, false, 'absolute')
    expect(url).toBe(`/files/7?_sig=${sign('k1', 'http://localhost/files/7')}`)
    expect(verdict(s, url, 'localhost')).toBe(200)
  })

  // Any other string used to sign silently as 'relative'.
  it('refuses a payloadMode other than relative or absolute', () => {
    const bad = 'Absolute' as PayloadMode
    expect(
      () => new UrlSigner({ keys: ['k1'], urlFor: kernel.router.urlFor, payloadMode: bad }),
    ).toThrow(/payloadMode must be 'relative' or 'absolute', got "Absolute"/)
    const s = signer(['k1'])
    expect(() => s.signedUrlFor('files.show', { id: 1 }, {}, null, false, bad)).toThrow(RangeError)
    expect(() => s.temporaryUrlFor('files.show', { id: 1 }, {}, 60, false, bad)).toThrow(RangeError)
    expect(() => s.temporaryUrlUntil('files.show', clock + 60, { id: 1 }, {}, false, bad)).toThrow(
      RangeError,
    )
  })

  it("uses the signer's configured payloadMode unless a call gives one", () => {
    const absolute = new UrlSigner({
      keys: ['k1'],
      urlFor: kernel.router.urlFor,
      now,
      payloadMode: 'absolute',
    })
    expect(absolute.signedUrlFor('files.show', { id: 7 })).toBe(
      `/files/7?_sig=${sign('k1', 'http://localhost/files/7')}`,
    )
    expect(absolute.signedUrlFor('files.show', { id: 7 }, {}, null, false, 'relative')).toBe(
      `/files/7?_sig=${sign('k1', '/files/7')}`,
    )
  })
})

describe('verification', () => {
  it('temporaryUrlFor verifies until its expiry, then answers 410', () => {
    clock = 1_700_000_000
    const s = signer(['k1'])
    const url = s.temporaryUrlFor('files.show', { id: 3 }, {}, 60)
    expect(verdict(s, url)).toBe(200)
    clock += 60
    expect(verdict(s, url)).toBe(200)
    clock += 1
    expect(verdict(s, url)).toBe(410)
    clock = 1_700_000_000
  })

  it('temporaryUrlUntil takes a Date or Unix seconds', () => {
    const s = signer(['k1'])
    const byDate = s.temporaryUrlUntil('files.show', new Date((clock + 30) * 1000), { id: 1 })
    const bySeconds = s.temporaryUrlUntil('files.show', clock - 1, { id: 1 })
    expect(byDate).toContain(`_exp=${clock + 30}`)
    expect(verdict(s, byDate)).toBe(200)
    expect(verdict(s, bySeconds)).toBe(410)
  })

  it('answers 400 when _sig is missing or repeated', () => {
    const s = signer(['k1'])
    expect(verdict(s, '/files/3')).toBe(400)
    const url = s.signedUrlFor('files.show', { id: 3 })
    expect(verdict(s, `${url}&_sig=${'0'.repeat(64)}`)).toBe(400)
  })

  it('answers 403 for a _sig that is not 64 hex digits (no key can match it), and reads hex in either case', () => {
    const s = signer(['k1'])
    expect(verdict(s, '/files/3?_sig=abc')).toBe(403)
    const url = s.signedUrlFor('files.show', { id: 3 })
    expect(verdict(s, url.replace(/_sig=([0-9a-f]+)/, '_sig=$1x'))).toBe(403)
    expect(verdict(s, url.replace(/_sig=[0-9a-f]{2}/, '_sig=zz'))).toBe(403)
    expect(
      verdict(
        s,
        url.replace(/_sig=([0-9a-f]+)/, (_m, hex: string) => `_sig=${hex.toUpperCase()}`),
      ),
    ).toBe(200)
  })

  it('answers 400 when _exp is malformed or repeated', () => {
    const s = signer(['k1'])
    const url = s.temporaryUrlFor('files.show', { id: 3 }, {}, 60)
    expect(verdict(s, url.replace(/_exp=\d+/, '_exp=tomorrow'))).toBe(400)
    expect(verdict(s, url.replace(/_exp=\d+/, '_exp=-5'))).toBe(400)
    expect(verdict(s, url.replace(/(_exp=\d+)/, '$1&$1'))).toBe(400)
  })

  it('answers 403 for a tampered path, query value, added parameter or extended expiry', () => {
    const s = signer(['k1'])
    const url = s.temporaryUrlFor('files.show', { id: 3 }, { user: 'ada' }, 60)
    expect(verdict(s, url.replace('/files/3', '/files/4'))).toBe(403)
    expect(verdict(s, url.replace('user=ada', 'user=bob'))).toBe(403)
    expect(verdict(s, url.replace('?', '?admin=1&'))).toBe(403)
    expect(
      verdict(
        s,
        url.replace(/_exp=(\d+)/, (_m, e: string) => `_exp=${Number(e) + 3600}`),
      ),
    ).toBe(403)
  })

  it('checks the signature before the expiry (a tampered, expired URL is 403, not 410)', () => {
    const s = signer(['k1'])
    const url = s.temporaryUrlFor('files.show', { id: 3 }, {}, 10)
    clock += 100
    try {
      expect(verdict(s, url.replace('/files/3', '/files/4'))).toBe(403)
      expect(verdict(s, url)).toBe(410)
    } finally {
      clock -= 100
    }
  })

  it('still verifies when the query parameters arrive in another order or differently encoded', () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 3 }, { b: '2', a: 'x y', c: "it's" }, 60)
    const [path, query] = url.split('?') as [string, string]
    const reordered = `${path}?${query.split('&').reverse().join('&')}`
    expect(verdict(s, reordered)).toBe(200)
    expect(verdict(s, url.replace('x%20y', 'x+y'))).toBe(200)
  })

  it("signs a repeated key's values in their order: swapping them breaks the signature", () => {
    const s = signer(['k1'])
    const sign = (payload: string): string =>
      createHmac('sha256', 'k1').update(payload).digest('hex')
    const sig = sign('/files/3?k=1&k=2')
    expect(verdict(s, `/files/3?k=1&k=2&_sig=${sig}`)).toBe(200)
    expect(verdict(s, `/files/3?k=2&k=1&_sig=${sig}`)).toBe(403)
  })

  it('verifies a URL signed with an old key while that key is still configured for verification', () => {
    const old = signer(['old-key'])
    const url = old.signedUrlFor('files.show', { id: 9 })
    expect(verdict(signer(['new-key', 'old-key']), url)).toBe(200)
    expect(verdict(signer(['new-key']), url)).toBe(403)
  })

  it('signs with the first key only', () => {
    const rotating = signer(['new-key', 'old-key'])
    const url = rotating.signedUrlFor('files.show', { id: 9 })
    expect(verdict(signer(['new-key']), url)).toBe(200)
    expect(verdict(signer(['old-key']), url)).toBe(403)
  })

  it("payloadMode 'absolute' binds the signature to scheme and host", () => {
    const s = signer(['k1'])
    const url = s.signedUrlFor('files.show', { id: 5 }, {}, null, false, 'absolute')
    expect(verdict(s, url, 'localhost')).toBe(200)
    expect(verdict(s, url, 'evil.example.com')).toBe(403)
    expect(verdict(s, `https://localhost${url}`)).toBe(403)
    // A relative signature holds on any host.
    expect(verdict(s, s.signedUrlFor('files.show', { id: 5 }), 'other.example.com')).toBe(200)
  })
})

describe('the verifySignedUrl alias through the kernel', () => {
  it('lets a URL signed by the kernel through to the handler', async () => {
    const url = kernel.signer.temporaryUrlFor('files.show', { id: 42 }, {}, 300)
    const response = await call(kernel, url)
    expect(response.status).toBe(200)
    expect(await jsonOf(response)).toEqual({ id: 42, signed: true })
  })

  it('answers 400, 403 and 410 as error responses before the handler runs', async () => {
    const url = kernel.signer.signedUrlFor('files.show', { id: 42 })
    const missing = await call(kernel, '/files/42')
    expect(missing.status).toBe(400)
    expect(missing.header('cache-control')).toBe('no-store')
    expect(await jsonOf(missing)).toMatchObject({ code: 400 })
    expect((await call(kernel, url.replace('/42?', '/43?'))).status).toBe(403)
    const expired = kernel.signer.temporaryUrlUntil(
      'files.show',
      Math.floor(Date.now() / 1000) - 10,
      { id: 42 },
    )
    expect((await call(kernel, expired)).status).toBe(410)
  })

  it('verifies with the kernel signing keys (another kernel key does not verify)', async () => {
    const foreign = new UrlSigner({
      keys: ['someone-else'],
      urlFor: kernel.router.urlFor,
    }).signedUrlFor('files.show', { id: 1 })
    expect((await call(kernel, foreign)).status).toBe(403)
  })

  it('offers signedUrlFor, temporaryUrlFor and temporaryUrlUntil helpers bound to the booted kernel', async () => {
    const latest = await bootKernel(routes, { signingKeys: ['helper-key'] })
    const urls = [
      signedUrlFor('reports.show', { name: 'q3' }),
      temporaryUrlFor('reports.show', { name: 'q3' }, { format: 'pdf' }, 60),
      temporaryUrlUntil('reports.show', new Date(Date.now() + 60_000), { name: 'q3' }),
    ]
    for (const url of urls) {
      expect(await jsonOf(await call(latest, url))).toEqual({ name: 'q3' })
    }
    expect((await call(kernel, urls[0]!)).status).toBe(403)
  })
})
