/**
 * Regressions found by the seventh audit, in router.d.mts: calls urlFor() answers that the types
 * refused. A query object typed with an interface, an optional parameter given as `undefined`
 * under exactOptionalPropertyTypes, and an optional parameter named like a member of Object
 * (`valueOf`) left out. Checked with the real tsc on a cache the real CLI built, and each call
 * the types accept is run against the same cache.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  REPO_ROOT,
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
  '--exactOptionalPropertyTypes',
  '--module',
  'nodenext',
  '--moduleResolution',
  'nodenext',
  '--target',
  'es2022',
]

const ROUTES = `export default (r) => {
  r.get('/search', () => 'search', 'search')
  r.get('/posts/{slug}/{page?:int}', () => 'post', 'posts.show')
  r.get('/convert/{toString}/{valueOf?}', () => 'convert', 'convert')
}
`

const FILTERS = "{ status: 'open', tags: ['a', 'b'], range: { from: 1 } }"
// `number | undefined` to tsc, undefined when run.
const PAGE = 'Number.isNaN(0) ? 1 : undefined'
const TS_PRELUDE = `interface Filters {
  status?: string
  tags: readonly string[]
  range: { from: number; to?: number }
}
const filters: Filters = ${FILTERS}
const page = ${PAGE}
`
// tsc checks these calls in pass.ts; calls.mjs then runs them against the same cache.
const CALLS = [
  `urlFor('search', {}, filters)`,
  `urlFor('search', {}, { ...filters, page: 2 })`,
  `urlFor('posts.show', { slug: 'hello', page: undefined })`,
  `urlFor('posts.show', { slug: 'hello', page })`,
  `urlFor('convert', { toString: 'a' })`,
  `urlFor('convert', { toString: 'a', valueOf: 'b' })`,
  // Entries: a Map or a URLSearchParams (a repeated key written as a list).
  `urlFor('search', {}, new Map([['a', 1]]))`,
  `urlFor('search', {}, new URLSearchParams('t=x&t=y'))`,
]
const IMPORT = `import { urlFor } from './cache/router.mjs'`
const PASS = `${IMPORT}\n${TS_PRELUDE}\nexport const urls: string[] = [\n  ${CALLS.join(',\n  ')},\n]\n`
const RUN = [
  IMPORT,
  `const filters = ${FILTERS}`,
  `const page = ${PAGE}`,
  `console.log(JSON.stringify([${CALLS.join(', ')}]))`,
].join('\n')

// One refused call per line, so tsc's line numbers say which call was rejected.
const FAIL_LINES = {
  queryString: `urlFor('search', {}, 'status=open')`,
  queryArray: `urlFor('search', {}, ['open'])`,
  querySymbol: `urlFor('search', {}, { range: { from: Symbol('x') } })`,
  queryDate: `urlFor('search', {}, { since: new Date() })`,
  queryMapOfFunctions: `urlFor('search', {}, new Map([['a', () => 1]]))`,
  paramString: `urlFor('posts.show', { slug: 'hello', page: '2' })`,
  missingRequired: `urlFor('convert', {})`,
}
const FAIL = [IMPORT, '', ...Object.values(FAIL_LINES)]
const lineOf = (key: keyof typeof FAIL_LINES): number => Object.keys(FAIL_LINES).indexOf(key) + 3

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('router.d.mts accepts what urlFor answers', () => {
  let dir: string
  let pass: RunResult
  let fail: RunResult

  beforeAll(async () => {
    dir = makeProject({ 'routes.mjs': ROUTES })
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: dir },
    )
    expect(built.code, built.stderr).toBe(0)
    writeFiles(dir, { 'pass.ts': PASS, 'fail.ts': FAIL.join('\n') + '\n', 'calls.mjs': RUN })
    const tsc = (file: string): Promise<RunResult> =>
      runNode([TSC, ...TSC_FLAGS, file], { cwd: dir })
    ;[pass, fail] = await Promise.all([tsc('pass.ts'), tsc('fail.ts')])
  })

  it('type-checks an interface-typed query, an undefined optional, an omitted `valueOf`', () => {
    expect(pass.stdout + pass.stderr).toBe('')
    expect(pass.code).toBe(0)
  })

  it('builds each of those URLs at run time, as the types promised', async () => {
    const run = await runNode(['calls.mjs'], { cwd: dir })
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual([
      '/search?status=open&tags%5B0%5D=a&tags%5B1%5D=b&range%5Bfrom%5D=1',
      '/search?status=open&tags%5B0%5D=a&tags%5B1%5D=b&range%5Bfrom%5D=1&page=2',
      '/posts/hello',
      '/posts/hello',
      '/convert/a',
      '/convert/a/b',
      '/search?a=1',
      '/search?t%5B0%5D=x&t%5B1%5D=y',
    ])
  })

  it('still refuses a query that is no object of query values, and a wrong parameter', () => {
    expect(fail.code).not.toBe(0)
    const lines = [...fail.stdout.matchAll(/^fail\.ts\((\d+),\d+\): error/gm)].map((m) =>
      Number(m[1]),
    )
    const expected = (Object.keys(FAIL_LINES) as (keyof typeof FAIL_LINES)[]).map(lineOf)
    expect([...new Set(lines)].sort((a, b) => a - b)).toEqual(expected)
  })
})

describe('fw route:cache build after an upgrade of fw', () => {
  it('writes router.d.mts again when the code that emits it changed, the routes unchanged', async () => {
    // A copy of the built fw, whose declarations emitter then changes as an upgrade would.
    const fw = makeProject()
    for (const part of ['bin', 'dist', 'templates', 'package.json'])
      cpSync(join(REPO_ROOT, part), join(fw, part), { recursive: true })
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(fw, 'node_modules'))
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const build = (): Promise<RunResult> =>
      runNode([join(fw, 'bin', 'fw.js'), 'route:cache', 'build', '--routes', 'routes.mjs'], {
        cwd: dir,
      })
    expect((await build()).stdout).toMatch(/built/)
    expect((await build()).stdout).toMatch(/up to date/)
    const emitter = join(fw, 'dist', 'compiler', 'emit', 'types.js')
    writeFileSync(
      emitter,
      readFileSync(emitter, 'utf8').replace(
        '// Types of router.mjs',
        '// Types (new) of router.mjs',
      ),
    )
    expect((await build()).stdout).toMatch(/built/)
    expect(readFileSync(join(dir, '.fw', 'cache', 'router.d.mts'), 'utf8')).toContain(
      'Types (new) of router.mjs',
    )
  })
})
