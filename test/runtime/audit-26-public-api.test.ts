/**
 * Today's options as an app meets them through the package's entry points (public-API audit):
 * `new HttpError(400, { headers: new Headers(...) })`, which the README documents and the runtime
 * takes, did not compile (headers was typed as an object only); the revocation lists' option types
 * and RevocationListFullError were not exported from fw/auth; SQLite's lock budget (busyBudgetMs)
 * could not be set through openDatabase, the only public way to open a store.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HttpError, badRequest } from '../../src/index.js'
import { RevocationListFullError as FullError } from '../../src/auth/index.js'
import { REPO_ROOT } from '../support/project.js'
import { typeDiagnostics } from '../support/typecheck.js'

const FILE = join(REPO_ROOT, 'test', 'runtime', '__audit-26-check.ts')

const SOURCE = `import { safePath, HttpError, badRequest, defineRoutes, type SafePathOptions } from '../../src/index.js'
import { MemoryRevocationList, RedisRevocationList, RevocationListFullError, authRoutes, openDatabase, type Auth, type RevocationList, type MemoryRevocationOptions, type RedisRevocationOptions } from '../../src/auth/index.js'
import { Redis } from 'ioredis'
declare const auth: Auth
const dot: SafePathOptions = { dotfiles: true }
safePath('public', '.well-known/x', dot)
const memory: MemoryRevocationOptions = { maxEntries: 10_000, maxPerSubject: 50 }
const list: RevocationList = new MemoryRevocationList(memory)
void list.revoke('jti', 1, 'user-1')
list.assertRoom?.('jti', 'user-1')
const redis: RedisRevocationOptions = { commandTimeoutMs: 500 }
new RedisRevocationList(new Redis({ lazyConnect: true }), redis)
defineRoutes((r) => authRoutes(r, auth, { refreshMiddleware: ['throttle:10,60'] }))
new HttpError(502, { headers: new Headers({ 'retry-after': '5' }) })
badRequest('x', { headers: new Map([['x-a', 'b']]) })
void openDatabase('sqlite::memory:', { busyBudgetMs: 100 })
const full: Error = new RevocationListFullError(1)
// Refused (lines 19-25): misspelt or mistyped options.
safePath('public', 'x', { dotFiles: true })
safePath('public', 'x', { dotfiles: 'yes' })
new MemoryRevocationList({ maxPerUser: 1 })
new RedisRevocationList(new Redis(), { commandTimeout: 1 })
authRoutes(defineRoutes(() => {}) as never, auth, { refreshMiddlewares: [] })
new HttpError(400, { headers: 'x-a: b' })
void openDatabase('sqlite::memory:', { busyBudgetMs: '5s' })
`

describe('the new options through the public entry points', () => {
  it('compile as documented, and misspelt or mistyped ones do not', () => {
    const found = typeDiagnostics(FILE, SOURCE)
    expect(
      found.map((d) => d.split(':')[0]),
      found.join('\n'),
    ).toEqual(['19', '20', '21', '22', '23', '24', '25'])
  }, 60_000)

  it('take a Headers or Map as HttpError headers at run time too', () => {
    const upstream = new Headers({ 'retry-after': '5' })
    upstream.append('set-cookie', 'a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT')
    upstream.append('set-cookie', 'b=2')
    const error = new HttpError(502, { headers: upstream })
    expect(error.headers['retry-after']).toBe('5')
    expect(error.headers['set-cookie']).toEqual([
      'a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT',
      'b=2',
    ])
    expect(badRequest('x', { headers: new Map([['x-a', 'b']]) }).headers).toEqual({ 'x-a': 'b' })
    expect(new FullError(3).name).toBe('RevocationListFullError')
  })
})
