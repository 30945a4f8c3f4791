/**
 * Regression: an emoji (any character outside the BMP) in a route literal crashed the build with
 * "URI malformed" and "this looks like a bug in fw", no file:line: encodeURIComponent was given
 * half of its UTF-16 surrogate pair. It is a literal like `é`: matched in its UTF-8 escapes.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

describe('a route literal with a character outside the BMP', () => {
  it('builds and matches its percent-encoded UTF-8 form, any case', async () => {
    const m = await compileRoutes((r) => {
      r.get('/z/😀', noop, 'smile')
      r.get('/café/😀/{id:int}', noop, 'both')
    })
    expect(m.match('GET', '/z/%F0%9F%98%80')).toMatchObject({ route: { name: 'smile' } })
    expect(m.match('GET', '/z/%f0%9f%98%80')).toMatchObject({ route: { name: 'smile' } })
    expect(m.match('GET', '/caf%C3%A9/%F0%9F%98%80/7')).toMatchObject({
      route: { name: 'both' },
      params: { id: 7 },
    })
    expect(m.urlFor('smile')).toBe('/z/%F0%9F%98%80')
  })

  it('is a pattern error when it is half a surrogate pair (file:line: build-rejects.test.ts)', () => {
    const registrar = collectRoutes((r) => {
      r.get('/ok', noop)
      r.get('/z/\ud83d', noop)
    })
    let caught: unknown
    try {
      analyzeRoutes(registrar.routes, new Set())
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(FwError)
    const error = caught as FwError
    expect(error.code).toBe('FW_PATTERN_INVALID')
    expect(error.message).toMatch(/surrogate/)
    expect(error.message).not.toContain('\n')
  })
})
