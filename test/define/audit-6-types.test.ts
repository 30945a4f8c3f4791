/**
 * Audit 6: the registration forms the README and the spec show type-check under `strict`.
 * Regressions: in `r.group('/y', null, (r) => { ... })` the callback's `r` was an implicit `any`
 * (TS7006: the middleware slot's type also took functions, so the callback had no single
 * contextual type), and a verb's third argument `[]` (the spec's "array", none) was TS2345; an
 * inline handler's or middleware's request was `never` (`req.query` was TS2339), so every
 * parameter needed an annotation.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../support/project.js'
import { typeDiagnostics } from '../support/typecheck.js'

// A file that is never written: served to the compiler as if it were in test/define/.
const FILE = join(REPO_ROOT, 'test', 'define', '__audit-6-types-check.ts')

const diagnostics = (source: string): string[] => typeDiagnostics(FILE, source)

// One program for both cases: type-checking fw's sources takes seconds.
const SOURCE = `import { defineRoutes, type Middleware } from '../../src/index.js'
const stats = () => ({ users: 1 })
const tenant: Middleware = (req, next) => next(req)
export default defineRoutes((r) => {
  r.group('/x', (r) => { r.get('/a', stats) })
  r.group('/y', null, (r) => { r.get('/a', stats) })
  r.group('/z', null, ['auth', tenant], (r) => { r.get('/a', stats) })
  r.group('/w', null, 'auth', 'w.', (r) => { r.get('/a', stats, 'a') })
  r.group({ prefix: '/v', middleware: tenant }, (r) => r.get('/a', stats))
  r.get('/m', stats, [])
  r.get('/n', stats, null).withName('n').withMiddleware(['auth', tenant])
  // Refused at run time, so refused by the types too (lines 13 and 14):
  r.get('/a', stats, ['auth'])
  r.group('/b', null, ['auth'], 'b.')
  // Inline handlers and middleware get the request's type (they were \`never\`): no annotation.
  r.get('/q', (req) => ({ a: req.query('a'), ip: req.getClientAddress() }))
  r.get('/u/{id:int}', (req, id: number) => ({ id: id + 1, path: req.getPath() }))
  r.get('/t', stats, { middleware: [(req, next) => next(req.withAttribute('t', 1))] })
  r.get('/s', stats).withMiddleware(async (req, next) => (await next(req)).withHeader('x-s', '1'))
  r.alias('timing', (req, next) => next(req))
  // A typo on the request is caught (line 22).
  r.get('/e', (req) => req.qurey('a'))
})
`

describe('registration forms under strict TypeScript', () => {
  it('types the callback of every positional group form and [] as no options; refuses the rest', () => {
    const found = diagnostics(SOURCE)
    expect(
      found.map((d) => d.split(':')[0]),
      found.join('\n'),
    ).toEqual(['13', '14', '22'])
  }, 60_000)
})
