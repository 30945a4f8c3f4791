/**
 * Regressions of the signed-URL audit: the signer must never hand out a URL its own verifier
 * answers 400 ("Malformed URL expiry"), which `_exp` beyond 12 digits or before 1970 was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../src/runtime/http-error.js'
import type { Kernel } from '../../src/runtime/kernel.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { UrlSigner } from '../../src/runtime/signed-url.js'
import { bootKernel, cleanupTempDirs } from './kernel/support.js'

afterAll(cleanupTempDirs)

const NOW = 1_700_000_000
let signer: UrlSigner

beforeAll(async () => {
  const kernel: Kernel = await bootKernel(
    (r) => {
      r.get('/files/{id:int}', () => ({ ok: true }), {
        name: 'files.show',
        middleware: ['verifySignedUrl'],
      })
    },
    { signingKeys: ['audit-key'] },
  )
  signer = new UrlSigner({ keys: ['audit-key'], urlFor: kernel.router.urlFor, now: () => NOW })
})

/** The status verification gives `url` (200 when it holds). */
function verdict(url: string): number {
  try {
    signer.verify(FwRequest.create({ uri: url }))
    return 200
  } catch (error) {
    if (error instanceof HttpError) return error.status
    throw error
  }
}

describe('expiries the verifier can read', () => {
  it('refuses a ttl whose expiry would not fit in _exp, instead of signing a URL answered 400', () => {
    expect(() => signer.signedUrlFor('files.show', { id: 1 }, {}, 1e13)).toThrow(RangeError)
    expect(() => signer.temporaryUrlFor('files.show', { id: 1 }, {}, 1e20)).toThrow(RangeError)
  })

  it('refuses an expiry date beyond year 33658 or before 1970', () => {
    const far = new Date(8.64e15)
    expect(() => signer.temporaryUrlUntil('files.show', far, { id: 1 })).toThrow(RangeError)
    expect(() => signer.temporaryUrlUntil('files.show', 1e12, { id: 1 })).toThrow(RangeError)
    expect(() => signer.temporaryUrlUntil('files.show', -5, { id: 1 })).toThrow(RangeError)
  })

  it('still signs the last expiry _exp can carry, and a past one (410, not 400)', () => {
    expect(verdict(signer.temporaryUrlUntil('files.show', 999_999_999_999, { id: 1 }))).toBe(200)
    expect(verdict(signer.temporaryUrlUntil('files.show', 0, { id: 1 }))).toBe(410)
    // A ttl of 0 or less is refused (audit-19-errors): a past expiry comes from temporaryUrlUntil.
  })
})
