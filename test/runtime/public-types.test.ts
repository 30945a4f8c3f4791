/**
 * Public types as a strict TypeScript app meets them (a typed-API audit): data typed by an
 * interface was refused where any object is taken at run time (`view('page', page)`, an error's
 * `body`, urlFor's params), urlFor's query refused the URLSearchParams and Map it takes, and the
 * kernel's lists refused readonly arrays (`as const`, `readonly string[]`). And code that fails at
 * run time compiled: a middleware that returns no response, `redirect('/x', 200)`.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../support/project.js'
import { typeDiagnostics } from '../support/typecheck.js'

const FILE = join(REPO_ROOT, 'test', 'runtime', '__public-types-check.ts')

const SOURCE = `import { badRequest, defineRoutes, redirect, signedUrlFor, urlFor, view, type KernelOptions } from '../../src/index.js'
interface Page { title: string }
interface UserRef { id: number }
const page: Page = { title: 'Home' }
const ref: UserRef = { id: 1 }
view('page', page)
badRequest('Bad input', { body: page })
urlFor('users.show', ref, new URLSearchParams('tag=a&tag=b'))
urlFor('users.show', ref, new Map([['tag', 'a']]), true)
signedUrlFor('users.show', ref, page)
const post = ['auth'] as const
const keys: readonly string[] = ['k1']
const options: Partial<KernelOptions> = { postGlobal: post, preGlobalTags: post, signingKeys: keys }
// Still refused (line 15): a query that is no object.
urlFor('users.show', ref, 'tag=a')
// Refused, as they fail at run time (lines 18-21): a middleware that returns no response, a
// redirect with a status that is no redirect's.
const route: KernelOptions['preGlobal'] = [(req, next) => { next(req) }]
const global: KernelOptions['postGlobal'] = [async () => 'hi']
redirect('/x', 200)
defineRoutes((r) => r.get('/a', () => 1).withMiddleware((req, next) => { next(req) }))
`

describe('public types under strict TypeScript', () => {
  it('take interface-typed data, URLSearchParams and Map queries, and readonly lists', () => {
    const found = typeDiagnostics(FILE, SOURCE)
    expect(
      found.map((d) => d.split(':')[0]),
      found.join('\n'),
    ).toEqual(['15', '18', '19', '20', '21'])
  }, 60_000)

  it('take options read from the environment under exactOptionalPropertyTypes', () => {
    // createAuth's own documented call failed: TS2379, `string | undefined` is not `string`.
    const source = `import { createAuth } from '../../src/auth/index.js'
import { createRedisStore } from '../../src/throttle/index.js'
import { type KernelOptions, type Logger } from '../../src/index.js'
declare const logger: Logger | undefined
createAuth({ secret: process.env.JWT_SECRET, database: process.env.DATABASE_URL })
createRedisStore({ url: process.env.REDIS_URL })
const options: Partial<KernelOptions> = { log: logger, signingKeys: undefined }
`
    expect(typeDiagnostics(FILE, source, { exactOptionalPropertyTypes: true })).toEqual([])
  }, 60_000)

  it('type a config file through defineConfig, kernel options included', () => {
    const source = `import { defineConfig } from '../../src/index.js'
defineConfig({ routes: 'app/routes.ts', APP_ENV: 'production', env: { X: 1 }, kernel: { sendTimeoutMs: 2000 } })
defineConfig({ kernel: { requestScopeEnbled: true } })
defineConfig({ kernel: { sendTimeoutMs: '2m' } })
defineConfig({ rotues: 'routes.ts' })
`
    const found = typeDiagnostics(FILE, source)
    expect(
      found.map((d) => d.split(':')[0]),
      found.join('\n'),
    ).toEqual(['3', '4', '5'])
  }, 60_000)
})
