/**
 * Audit 27, unusual source files: the file:line:column fw prints must be the one an editor shows
 * for the file as saved. A UTF-8 byte order mark counted as a column on line 1 (1 for routes and
 * thrown errors, 3 for syntax errors); a syntax error after a non-ASCII character was told at its
 * byte offset (esbuild's columns are UTF-8 bytes); and a one-line (minified) routes file that uses
 * import.meta had every position on its line shifted by the declaration fw adds there.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(() => assertBuilt())
afterAll(() => cleanupProjects())

const BOM = '\uFEFF'

/** The first stderr line of `fw route:cache build` on this routes file (which must fail). */
async function firstError(routes: string): Promise<string> {
  const dir = makeProject({ 'routes.ts': routes })
  const { code, stderr } = await runFw(['route:cache', 'build'], { cwd: dir })
  expect(code).toBe(1)
  return lines(stderr)[0]!
}

/** 1-based column of `needle` in `line` as an editor counts it (UTF-16 code units). */
function columnOf(line: string, needle: string): number {
  const at = line.lastIndexOf(needle)
  expect(at).toBeGreaterThanOrEqual(0)
  return at + 1
}

const MINIFIED = `export default (r: any) => { r.get('/a', () => 1, 'a'); r.get('/b/{x:int', () => 1, 'b') }`

describe('positions in files saved with a byte order mark', () => {
  it('does not count the mark in a route registered on line 1', async () => {
    const line = await firstError(`${BOM}${MINIFIED}\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(MINIFIED, "get('/b")}:`)
  })

  it('does not count the mark in a syntax error on line 1', async () => {
    const source = `export default (r: any) => { r.get('/a' () => 1) }`
    const line = await firstError(`${BOM}${source}\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(source, '=>')}:`)
    expect(line).toContain('FW_ROUTES_SYNTAX')
  })

  it('does not count the mark in an error thrown on line 1', async () => {
    const source = `export default (r: any) => { throw new Error('x') }`
    const line = await firstError(`${BOM}${source}\r\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(source, 'new Error')}:`)
  })
})

describe('syntax errors after non-ASCII text', () => {
  it('counts characters, not UTF-8 bytes (CRLF, tabs and é on the line)', async () => {
    const bad = `\tconst x = "éé"; r.get('/é' () => 1)`
    const line = await firstError(`export default (r: any) => {\r\n${bad}\r\n}\r\n`)
    expect(line).toContain(`routes.ts:2:${columnOf(bad, '=>')}:`)
  })

  it('counts characters on a line that also has fw’s import.meta declaration', async () => {
    const source = `const u = import.meta.url; const e = "é"; export default (r: any) => { r.get('/a' () => 1) }`
    const line = await firstError(`${source}\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(source, '=>')}:`)
  })
})

describe('a minified routes file that uses import.meta', () => {
  const source = `const u = import.meta.url; ${MINIFIED}`

  it('names the column of the bad route as saved', async () => {
    const line = await firstError(`${source}\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(source, "get('/b")}:`)
  })

  it('names the column of an error thrown on that line as saved', async () => {
    const thrower = `const u = import.meta.url; export default (r: any) => { throw new Error('x') }`
    const line = await firstError(`${thrower}\n`)
    expect(line).toContain(`routes.ts:1:${columnOf(thrower, 'new Error')}:`)
  })
})

describe('fw run from a subfolder of the project', () => {
  it('says where the routes file is instead of suggesting to create one', async () => {
    const dir = makeProject({
      'routes.ts': `export default (r: any) => { r.get('/', () => 'home') }\n`,
      'src/deep/keep.txt': '',
    })
    const { code, stdout, stderr } = await runFw(['routes:list'], { cwd: join(dir, 'src/deep') })
    expect(code).toBe(1)
    expect(stdout).toBe('')
    const [message, hint] = lines(stderr)
    expect(message).toContain('Routes file routes.ts does not exist')
    expect(hint).toContain(`run fw from ${dir}`)
    expect(hint).toContain(`--routes ${join(dir, 'routes.ts')}`)
    expect(hint).not.toContain('fw init')
    expect(stderr).not.toMatch(/^\s+at /m)
  })

  it("points at no routes file above the project's root (another project's)", async () => {
    const dir = makeProject({
      'routes.ts': `export default (r: any) => { r.get('/', () => 'home') }\n`,
      'other/package.json': '{}',
    })
    const { code, stderr } = await runFw(['routes:list'], { cwd: join(dir, 'other') })
    expect(code).toBe(1)
    const [, hint] = lines(stderr)
    expect(hint).toBe('  hint: Pass --routes FILE, or create routes.ts (fw init scaffolds one).')
  })
})
