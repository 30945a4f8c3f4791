/**
 * Unusual but plausible patterns (audit 26).
 *
 * Regressions:
 * - A constraint with a %-escape that match() never shows it (`{x:caf%c3%a9}`, `{x:a%2Db}`,
 *   `{x:%41}`) built, and its route never matched: constraints see the path in normal form
 *   (uppercase hex, unreserved characters decoded), as the literal `/caf%c3%a9` is matched.
 *   Now FW_REGEX_NEVER_MATCHES, as `{x:café}` is.
 * - A literal dot segment (`/a/../b`) built, and urlFor wrote it as it is, which clients send as
 *   `/b` (a 404); escaped, browsers and fetch remove it too. Such a pattern is refused.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

function rejection(register: (r: Registrar) => void): FwError {
  const registrar = collectRoutes(register)
  try {
    analyzeRoutes(registrar.routes, new Set(registrar.aliases.keys()))
  } catch (error) {
    if (error instanceof FwError) return error
    throw error
  }
  throw new Error('expected the routes to be rejected')
}

describe('constraints with escapes match() never shows', () => {
  it.each(['caf%c3%a9', '%c3%A9', 'a%2Db', 'a%2db', '%41', '%7E', '[a-z]+%2e[a-z]+', 'x%2fy'])(
    '{x:%s} is FW_REGEX_NEVER_MATCHES',
    (spec) => {
      const error = rejection((r) => r.get(`/r/{x:${spec}}`, noop))
      expect(error.code).toBe('FW_REGEX_NEVER_MATCHES')
      expect(error.message).toContain('%-escapes')
      expect(error.hint).toContain('uppercase')
    },
  )

  it('builds escapes in normal form, and classes that can spell one', async () => {
    const router = await compileRoutes((r) => {
      r.get('/a/{x:caf%C3%A9}', noop, 'a')
      r.get('/b/{x:x%2Fy}', noop, 'b')
      r.get('/c/{x:(?:%[0-9a-f]{2})+}', noop, 'c')
      r.get('/d/{x:[^/]+}', noop, 'd')
    })
    expect(router.match('GET', '/a/caf%c3%a9')).toMatchObject({ params: { x: 'café' } })
    expect(router.match('GET', '/b/x%2fy')).toMatchObject({ params: { x: 'x/y' } })
    expect(router.match('GET', '/c/%20%40')).toMatchObject({ params: { x: ' @' } })
    expect(router.urlFor('a', { x: 'café' })).toBe('/a/caf%C3%A9')
  })
})

describe('literal dot segments', () => {
  // urlFor wrote them as they are (`/a/../b`), which clients send as `/b`; escaped as %2E%2E,
  // browsers and fetch still remove them. No link can reach such a route: refused.
  it.each(['/a/../b', '/c/./d', '/..', '/e/%2e%2E', '/f/.%2e/g'])(
    '%s is FW_PATTERN_INVALID',
    (path) => {
      const error = rejection((r) => r.get(path, noop))
      expect(error.code).toBe('FW_PATTERN_INVALID')
      expect(error.message).toContain('dot-segments')
    },
  )

  it('builds segments that only hold dots among other characters', async () => {
    const router = await compileRoutes((r) => {
      r.get('/e/...', noop, 'three')
      r.get('/.well-known/x', noop, 'known')
    })
    expect(router.urlFor('three')).toBe('/e/...')
    expect(router.match('GET', '/.well-known/x')).toMatchObject({ route: { name: 'known' } })
  })
})
