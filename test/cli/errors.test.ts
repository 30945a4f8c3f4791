/**
 * User errors of `fw route:cache build`: exit 1, one `error file:line: ...` line and a hint, no
 * stack unless --debug (or FW_DEBUG=1), and the previous cache left as it was.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  runFw,
  writeFiles,
} from '../support/project.js'

interface Case {
  what: string
  routes: string
  /** What the error line must name: the file, and the line when there is one. */
  where: string
  code: string
  /** Extra text the message must contain. */
  says?: string
}

// Each routes file numbers its lines from 1; `where` is the line the user must look at.
const CASES: Case[] = [
  {
    what: 'a syntax error (located by esbuild)',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/a', () => 'a'\n}\n`,
    where: 'routes.ts:4',
    code: 'FW_ROUTES_SYNTAX',
  },
  {
    what: 'no default export',
    routes: `export const routes = (r) => {\n  r.get('/', () => 'home')\n}\n`,
    where: 'routes.ts:1',
    code: 'FW_ROUTES_NO_DEFAULT',
  },
  {
    what: 'a routes file that throws while it is loaded',
    routes: `const ready = false\n\nif (!ready) throw new Error('database not configured')\nexport default (r) => r.get('/', () => 'home')\n`,
    where: 'routes.ts:3',
    code: 'FW_ROUTES_LOAD',
    says: 'database not configured',
  },
  {
    what: 'a routes function that throws while it registers',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  throw new Error('kaboom')\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_ROUTES_LOAD',
    says: 'kaboom',
  },
  {
    what: 'a duplicate route name (at the second registration)',
    routes: `export default (r) => {\n  r.get('/a', () => 'a', 'x')\n  r.get('/b', () => 'b', 'y')\n  r.get('/c', () => 'c', 'x')\n}\n`,
    where: 'routes.ts:4',
    code: 'FW_NAME_DUPLICATE',
    says: 'routes.ts:2',
  },
  {
    what: 'the same method and path twice',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.post('/a', () => 'a')\n  r.post('/a', () => 'again')\n}\n`,
    where: 'routes.ts:4',
    code: 'FW_ROUTE_DUPLICATE',
    says: 'POST /a',
  },
  {
    what: 'a shadowed route (/u/{id} then /u/{name})',
    routes: `export default (r) => {\n  r.get('/u/{id}', () => 'id')\n  r.get('/u/{name}', () => 'name')\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_ROUTE_SHADOWED',
    says: '/u/{name}',
  },
  {
    what: 'a route after the catch-all',
    routes: `export default (r) => {\n  r.get('/x', () => 'x')\n  r.get('/{rest:.*}', () => 'fallback')\n  r.get('/y', () => 'y')\n}\n`,
    where: 'routes.ts:4',
    code: 'FW_CATCHALL_NOT_LAST',
  },
  {
    what: 'an invalid regex',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/c/{code:[z-a]}', () => 'code')\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_REGEX_INVALID',
  },
  {
    what: 'an unsafe regex (a+)+',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/c/{code:(a+)+}', () => 'code')\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_REGEX_UNSAFE',
  },
  {
    what: 'a malformed middleware alias throttle:0,60',
    routes: `export default (r) => {\n  r.get('/', () => 'home', { middleware: ['throttle:0,60'] })\n}\n`,
    where: 'routes.ts:2',
    code: 'FW_MIDDLEWARE_INVALID',
    says: 'throttle:0,60',
  },
  {
    what: "an unknown middleware alias 'auht'",
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/me', () => 'me', { middleware: 'auht' })\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_MIDDLEWARE_INVALID',
    says: 'auht',
  },
  {
    what: 'a mixed segment /files/{name}.txt',
    routes: `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('/files/{name}.txt', () => 'file')\n}\n`,
    where: 'routes.ts:3',
    code: 'FW_PATTERN_INVALID',
    says: '{name}.txt',
  },
  // No line applies to these two: the error names the file.
  {
    what: 'an empty route table',
    routes: `export default (r) => {\n}\n`,
    where: 'routes.ts',
    code: 'FW_ROUTES_EMPTY',
  },
]

const BUILD = ['route:cache', 'build', '--routes', 'routes.ts', '--cache', 'cache']
const STACK_FRAME = /^ {4}at /m

/** The user-facing shape every error shares: exit 1, two lines, nothing on stdout, no stack. */
function expectOneErrorLine(
  result: Awaited<ReturnType<typeof runFw>>,
  where: string,
  code: string,
): string {
  expect(result.code).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr).not.toMatch(STACK_FRAME)
  const [error = '', hint, ...rest] = lines(result.stderr)
  expect(rest).toEqual([])
  expect(error).toMatch(/^error .* \[FW_[A-Z_]+\]$/)
  expect(error.endsWith(`[${code}]`)).toBe(true)
  // With a line: `error routes.ts:4:3: message`; without one the message names the file.
  if (/:\d+$/.test(where)) expect(error).toMatch(new RegExp(`^error ${escape(where)}:\\d+: `))
  else expect(error).toMatch(new RegExp(`\\b${escape(where)}\\b`))
  expect(hint).toMatch(/^ {2}hint: \S/)
  return error
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw route:cache build on invalid routes', () => {
  it.each(CASES)('reports $what as one line naming $where, with a hint', async (c) => {
    const dir = makeProject({ 'routes.ts': c.routes })
    const result = await runFw(BUILD, { cwd: dir })
    const error = expectOneErrorLine(result, c.where, c.code)
    if (c.says) expect(error).toContain(c.says)
    expect(list(dir)).toEqual(['routes.ts'])
  })

  it('reports a package that is not installed at the import that names it, in any imported file', async () => {
    const dir = makeProject({
      'routes.ts': `import { helper } from './lib.ts'\nexport default (r) => {\n  r.get('/', helper)\n}\n`,
      'lib.ts': `// helpers\nimport pad from 'no-such-package-fw-test/sub'\nexport const helper = () => pad\n`,
    })
    const result = await runFw(BUILD, { cwd: dir })
    const error = expectOneErrorLine(result, 'lib.ts:2', 'FW_ROUTES_LOAD')
    expect(error).toContain("imports the package 'no-such-package-fw-test', which is not installed")
    expect(error).not.toMatch(/\.fw-\d+/)
    expect(list(dir)).toEqual(['lib.ts', 'routes.ts'])
  })

  it('reports a missing routes file by name', async () => {
    const dir = makeProject()
    const result = await runFw(['route:cache', 'build', '--routes', 'nope.ts'], { cwd: dir })
    const error = expectOneErrorLine(result, 'nope.ts', 'FW_ROUTES_NOT_FOUND')
    expect(error).toContain('does not exist')
    expect(list(dir)).toEqual([])
  })

  it('reports a folder given as the routes file by name, not as a compile error', async () => {
    const dir = makeProject({ 'app/keep.txt': '' })
    const result = await runFw(['route:cache', 'build', '--routes', 'app'], { cwd: dir })
    const error = expectOneErrorLine(result, 'app', 'FW_ROUTES_NOT_FOUND')
    expect(error).toContain('is a folder, not a routes file')
  })

  it.each([
    ['a file where the cache folder should be', 'taken', 'EEXIST'],
    ['a file where a parent folder of the cache should be', 'taken/cache', 'ENOTDIR'],
  ])('reports %s as a user error, not as a bug in fw', async (_what, cache, code) => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home')\n}\n`,
      taken: 'mine',
    })
    const result = await runFw(
      ['route:cache', 'build', '--routes', 'routes.ts', '--cache', cache],
      { cwd: dir },
    )
    const error = expectOneErrorLine(result, cache, 'FW_CACHE_WRITE')
    expect(error).toContain(`a file is in the way of the folder (${code})`)
    expect(result.stderr).not.toMatch(/bug in fw/)
    expect(readFileSync(join(dir, 'taken'), 'utf8')).toBe('mine')
  })
})

describe('--debug', () => {
  const DUPLICATE = `export default (r) => {\n  r.get('/a', () => 'a')\n  r.get('/a', () => 'b')\n}\n`

  it('prints the stack after the error line and hint', async () => {
    const dir = makeProject({ 'routes.ts': DUPLICATE })
    const { code, stderr } = await runFw([...BUILD, '--debug'], { cwd: dir })
    expect(code).toBe(1)
    expect(lines(stderr)[0]).toMatch(/^error routes\.ts:3\b.*\[FW_ROUTE_DUPLICATE\]$/)
    expect(lines(stderr)[1]).toMatch(/^ {2}hint: /)
    expect(stderr).toMatch(STACK_FRAME)
  })

  it('is also turned on by FW_DEBUG=1', async () => {
    const dir = makeProject({ 'routes.ts': DUPLICATE })
    const { code, stderr } = await runFw(BUILD, { cwd: dir, env: { FW_DEBUG: '1' } })
    expect(code).toBe(1)
    expect(stderr).toMatch(STACK_FRAME)
  })
})

describe('a failed build', () => {
  it('leaves the previous cache exactly as it was', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r) => {\n  r.get('/a', () => 'a', 'a')\n}\n`,
    })
    expect((await runFw(BUILD, { cwd: dir })).code).toBe(0)
    const cache = join(dir, 'cache')
    const manifest = readFileSync(join(cache, 'manifest.json'), 'utf8')
    const entry = readFileSync(join(cache, 'router.mjs'), 'utf8')
    const files = list(cache)

    writeFiles(dir, {
      'routes.ts': `export default (r) => {\n  r.get('/a', () => 'a', 'a')\n  r.get('/b', () => 'b', 'a')\n}\n`,
    })
    const failed = await runFw(BUILD, { cwd: dir })
    expectOneErrorLine(failed, 'routes.ts:3', 'FW_NAME_DUPLICATE')

    expect(readFileSync(join(cache, 'manifest.json'), 'utf8')).toBe(manifest)
    expect(readFileSync(join(cache, 'router.mjs'), 'utf8')).toBe(entry)
    expect(list(cache)).toEqual(files)
    expect(list(dir)).toEqual(['cache', 'routes.ts'])
  })
})
