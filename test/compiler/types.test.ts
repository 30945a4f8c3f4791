/**
 * The generated `router.d.mts` types urlFor: the user's TypeScript rejects an unknown route name
 * and a missing, mistyped or unknown parameter. Checked with the real tsc on files that import the
 * cache the real CLI built.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  TSC,
  assertBuilt,
  cleanupProjects,
  makeProject,
  runFw,
  runNode,
  writeFiles,
  type RunResult,
} from '../support/project.js'

const TSC_FLAGS = [
  '--noEmit',
  '--strict',
  '--module',
  'nodenext',
  '--moduleResolution',
  'nodenext',
  '--target',
  'es2022',
  '--skipLibCheck',
  'false',
]

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.group({ prefix: '/api/v1', name: 'v1.' }, (r) => {
    r.get('/users/{id:int}', () => 'user', 'users.show')
  })
  r.get('/posts/{slug:slug}/{page?}', () => 'post', 'posts.show')
  r.get('/proto', () => 'proto', '__proto__')
  r.get('/files/{path:.*}', () => 'file', 'files.show')
  r.group({ domain: '{account}.example.com', name: 'tenant.' }, (r) => {
    r.get('/whoami', () => 'me', 'whoami')
  })
  r.get('/café/{code:[A-Z]{3}}', () => 'menu', 'café-menu.ünï')
  r.get('/unnamed/{id}', () => 'unnamed')
}
`

const PASS = `import { match, urlFor } from './cache/router.mjs'

export const urls: string[] = [
  urlFor('v1.users.show', { id: 1 }),
  urlFor('home'),
  urlFor('home', {}),
  urlFor('posts.show', { slug: 'a' }),
  urlFor('posts.show', { slug: 'a', page: null }),
  urlFor('posts.show', { slug: 'a', page: 2 }),
  urlFor('v1.users.show', { id: 1 }, { tab: 'posts', n: 2, draft: false, tags: ['a', 'b'] }),
  urlFor('home', {}, {}, true),
  urlFor('posts.show', { slug: 'a' }, {}, 'https://example.test'),
  // Nested query values, as the runtime writes them (README: range[from]=1).
  urlFor('home', {}, { range: { from: 1, to: 2 } }),
  urlFor('home', {}, { filter: { status: ['open', 'closed'], range: { from: 1 } } }),
  urlFor('home', {}, { list: [{ id: 1 }, { id: 2 }], matrix: [[1, 2], [3]], skip: null }),
  // A query as entries (README: a key given twice as a list).
  urlFor('home', {}, new URLSearchParams('tag=a&tag=b')),
  urlFor('v1.users.show', { id: 1 }, new Map([['page', 2]])),
  urlFor('__proto__'),
  // A catch-all, a domain placeholder, a name with a dash and non-ASCII letters.
  urlFor('files.show', { path: 'a/b' }),
  urlFor('tenant.whoami', { account: 'acme' }, {}, true),
  urlFor('café-menu.ünï', { code: 'ABC' }),
]

const hit = match('GET', '/api/v1/users/1')
export const name: string | null = 'route' in hit ? hit.route.name : null
`

// One failing call per line, so tsc's line numbers say which call was rejected.
const FAIL_LINES = {
  unknownName: `export const a = urlFor('nope')`,
  missingParams: `export const b = urlFor('v1.users.show')`,
  missingParam: `export const c = urlFor('v1.users.show', {})`,
  mistypedParam: `export const d = urlFor('v1.users.show', { id: 'x' })`,
  unknownParam: `export const e = urlFor('v1.users.show', { id: 1, extra: 2 })`,
  missingBeforeOptional: `export const f = urlFor('posts.show', { page: 2 })`,
  paramsOnParamless: `export const g = urlFor('home', { id: 1 })`,
  symbolInQuery: `export const h = urlFor('home', {}, { range: { from: Symbol('x') } })`,
  functionInQuery: `export const i = urlFor('home', {}, { list: [() => 1] })`,
  functionInMap: `export const i2 = urlFor('home', {}, new Map([['f', () => 1]]))`,
  missingCatchAll: `export const j = urlFor('files.show')`,
  missingDomainParam: `export const k = urlFor('tenant.whoami', {})`,
  unprefixedName: `export const l = urlFor('whoami', { account: 'acme' })`,
  mistypedUnicodeName: `export const m = urlFor('cafe-menu.uni', { code: 'ABC' })`,
}
const FAIL =
  [`import { urlFor } from './cache/router.mjs'`, '', ...Object.values(FAIL_LINES)].join('\n') +
  '\n'
const lineOf = (key: keyof typeof FAIL_LINES): number => Object.keys(FAIL_LINES).indexOf(key) + 3

/** tsc's `fail.ts(LINE,COL): error TSxxxx: ...` lines, by line number. */
function errorsByLine(output: string): Map<number, string[]> {
  const errors = new Map<number, string[]>()
  for (const m of output.matchAll(/^fail\.ts\((\d+),\d+\): (error TS\d+: .*)$/gm)) {
    const line = Number(m[1])
    errors.set(line, [...(errors.get(line) ?? []), m[2]!])
  }
  return errors
}

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('router.d.mts types urlFor', () => {
  let pass: RunResult
  let fail: RunResult

  beforeAll(async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: dir },
    )
    expect(built.code, built.stderr).toBe(0)
    writeFiles(dir, { 'pass.ts': PASS, 'fail.ts': FAIL })
    // tsc takes seconds; the two checks are independent, so they run side by side.
    const tsc = (file: string): Promise<RunResult> =>
      runNode([TSC, ...TSC_FLAGS, file], { cwd: dir })
    const results = await Promise.all([tsc('pass.ts'), tsc('fail.ts')])
    pass = results[0]
    fail = results[1]
  })

  it('accepts valid names, params, optional params as null, query and absolute', () => {
    expect(pass.stdout + pass.stderr).toBe('')
    expect(pass.code).toBe(0)
  })

  it('rejects each invalid call, on its own line and no other', () => {
    expect(fail.code).not.toBe(0)
    const errors = errorsByLine(fail.stdout)
    const expected = (Object.keys(FAIL_LINES) as (keyof typeof FAIL_LINES)[]).map(lineOf)
    expect([...errors.keys()].sort((a, b) => a - b)).toEqual(expected)
    for (const messages of errors.values()) expect(messages).toHaveLength(1)
  })

  it('says why: the unknown name, the mistyped and the unknown parameter', () => {
    const errors = errorsByLine(fail.stdout)
    expect(errors.get(lineOf('unknownName'))![0]).toContain(`'"nope"'`)
    expect(errors.get(lineOf('missingParam'))![0]).toContain('{ id: number; }')
    expect(errors.get(lineOf('mistypedParam'))![0]).toContain(
      `Type 'string' is not assignable to type 'number'`,
    )
    expect(errors.get(lineOf('unknownParam'))![0]).toContain(`'extra' does not exist`)
  })
})
