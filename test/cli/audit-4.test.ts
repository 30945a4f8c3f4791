/**
 * Regressions found by the fourth CLI audit: what a routes file writes (route names, paths, thrown
 * messages, console output) reaching the terminal raw, a routes file that leaves a timer or a
 * connection open hanging a finished command, and cache folders fw cannot use, said as a bug in
 * fw or not at all. Each runs the real binary and looks at its output raw, as a terminal gets it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  FW_BIN,
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  runFw,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

/**
 * Runs the binary in `cwd`; its output raw, as a terminal receives it, and a short timeout: a
 * command that never ends is killed (code null).
 */
function runBriefly(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }
  delete env.NODE_OPTIONS
  delete env.FW_DEBUG
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FW_BIN, ...args], { cwd, env, timeout: 10_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// C0 and C1 controls and DEL: any of them printed raw can start a terminal escape or a new line.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

describe('fw routes:list on names and paths holding terminal escapes', () => {
  const ROUTES = [
    'export default (r) => {',
    `  r.get('/a', () => 1, 'x\\u001b[31mred')`,
    `  r.get('/b\\u001b]0;title\\u0007', () => 1, 'b\\u009b2J')`,
    `  r.get('/c', [class { ['m\\u001b[2J']() {} }, 'm\\u001b[2J'], 'c')`,
    '}',
    '',
  ].join('\n')

  it('prints them as escapes in the table, so a routes file cannot restyle or clear the terminal', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const result = await runBriefly(['routes:list', '--routes', 'routes.mjs'], dir)
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(RAW_CONTROL)
    const rows = lines(stripVTControlCharacters(result.stdout))
    expect(rows[1]).toMatch(/^GET {5}\* {5}\/a +x\\x1b\[31mred +closure$/)
    expect(rows[2]).toMatch(/^GET {5}\* {5}\/b\\x1b\]0;title\\x07 +b\\x9b2J +closure$/)
    expect(rows[3]).toMatch(/ c +anonymous@m\\x1b\[2J$/)
  })

  it('--json escapes the C1 controls JSON.stringify leaves raw (U+009B), and parses back to the same names', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const result = await runBriefly(['routes:list', '--routes', 'routes.mjs', '--json'], dir)
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(RAW_CONTROL)
    expect(result.stdout).toContain('"name": "b\\u009b2J"')
    const rows = JSON.parse(result.stdout) as { name: string; path: string }[]
    expect(rows.map((r) => r.name)).toEqual(['x\u001b[31mred', 'b\u009b2J', 'c'])
    expect(rows[1]!.path).toBe('/b\u001b]0;title\u0007')
  })
})

describe('an error quoting what the routes file wrote', () => {
  it('stays one line: a line break or an escape in the message is printed escaped', async () => {
    const dir = makeProject({
      'routes.mjs': `export default (r) => {\n  throw new Error('one\\ntwo\\u001b[2J')\n}\n`,
    })
    const result = await runBriefly(['routes:list', '--routes', 'routes.mjs'], dir)
    expect(result.code).toBe(1)
    expect(result.stderr).not.toMatch(RAW_CONTROL)
    const [error, hint, ...rest] = lines(stripVTControlCharacters(result.stderr))
    expect(rest).toEqual([])
    expect(error).toBe(
      'error routes.mjs:2:9: The routes file threw while it was run: one\\ntwo\\x1b[2J [FW_ROUTES_LOAD]',
    )
    expect(hint).toMatch(/^ {2}hint: /)
  })

  it('a route name with a line break is quoted on the error line, not split over two', async () => {
    const dir = makeProject({
      'routes.mjs': `export default (r) => {\n  r.get('/a', () => 1, 'a\\nb')\n}\n`,
    })
    const result = await runBriefly(['route:cache', 'build', '--routes', 'routes.mjs'], dir)
    expect(result.code).toBe(1)
    expect(lines(stripVTControlCharacters(result.stderr))[0]).toBe(
      'error routes.mjs:2:5: GET /a: route name "a\\nb" is empty or has spaces [FW_NAME_INVALID]',
    )
  })
})

describe('a routes file that leaves something running (a timer, a database pool)', () => {
  const ROUTES = `setInterval(() => {}, 1000)\nexport default (r) => {\n  r.get('/', () => 1, 'home')\n}\n`

  it('does not keep fw route:cache build from ending once it has built', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const result = await runBriefly(['route:cache', 'build', '--routes', 'routes.mjs'], dir)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^✔ built 1 route/)
  })

  it('nor fw routes:list, nor a build that fails (exit 1)', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'bad.mjs': ROUTES.replace("'home')", "'home')\n  r.get('/', () => 2)"),
    })
    const listed = await runBriefly(['routes:list', '--routes', 'routes.mjs'], dir)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^1 route$/m)
    const failed = await runBriefly(['route:cache', 'build', '--routes', 'bad.mjs'], dir)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toMatch(/\[FW_ROUTE_DUPLICATE\]/)
  })
})

describe('fw routes:list --json on a routes file that logs', () => {
  it('keeps stdout JSON alone: what the routes file prints goes to stderr', async () => {
    const dir = makeProject({
      'routes.mjs': `console.log('connecting')\nexport default (r) => {\n  console.info('registering')\n  r.get('/', () => 1, 'home')\n}\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.mjs', '--json'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([
      { method: 'GET', host: null, path: '/', name: 'home', middleware: [], handler: 'closure' },
    ])
    expect(lines(result.stderr)).toEqual(['connecting', 'registering'])
  })
})

describe('fw route:cache build --watch with a cache folder fw refuses', () => {
  it('says so and exits 1, instead of watching for edits that cannot help', async () => {
    const dir = makeProject({ 'routes.mjs': `export default (r) => r.get('/', () => 1)\n` })
    const result = await runBriefly(
      ['route:cache', 'build', '--watch', '--routes', 'routes.mjs', '--cache', '/'],
      dir,
    )
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe(
      'error Refusing to use "/" as the route cache directory [FW_CACHE_UNSAFE_DIR]',
    )
    expect(result.stdout).not.toMatch(/watching/)
  })
})

// Tests run as root, which may delete anywhere: this runs the binary as `nobody` where that works.
const canRunAsNobody =
  process.getuid?.() === 0 &&
  spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', ''], { timeout: 10_000 })
    .status === 0

describe.skipIf(!canRunAsNobody)('fw route:cache clear where the user may not delete', () => {
  it('is one FW_CACHE_WRITE line naming the folder, not "a bug in fw"', async () => {
    const dir = makeProject({ 'routes.mjs': `export default (r) => r.get('/', () => 1)\n` })
    expect(
      (await runFw(['route:cache', 'build', '--routes', 'routes.mjs'], { cwd: dir })).code,
    ).toBe(0)
    chmodSync(dir, 0o755)
    const run = spawnSync(
      'runuser',
      ['-u', 'nobody', '--', process.execPath, FW_BIN, 'route:cache', 'clear'],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' }, encoding: 'utf8' },
    )
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([
      `error Cannot clear the route cache in "${join(dir, '.fw', 'cache')}": permission denied (EACCES) [FW_CACHE_WRITE]`,
      '  hint: Run the clear as the user who built the cache, or give yours write access to the folder.',
    ])
    expect(list(join(dir, '.fw', 'cache'))).toContain('manifest.json')
  })
})

describe('fw route:cache build --cache given as a link to a folder that does not exist', () => {
  it('names the link and where it points, not "ENOENT ... a bug in fw"', async () => {
    const dir = makeProject({ 'routes.mjs': `export default (r) => r.get('/', () => 1)\n` })
    mkdirSync(join(dir, 'links'))
    symlinkSync('../gone', join(dir, 'links', 'cache'))
    const result = await runBriefly(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'links/cache'],
      dir,
    )
    expect(result.code).toBe(1)
    expect(lines(stripVTControlCharacters(result.stderr))).toEqual([
      `error Cannot write the route cache to "${join(dir, 'links', 'cache')}": it is a symbolic link to "${join(dir, 'gone')}", which does not exist [FW_CACHE_WRITE]`,
      `  hint: Create "${join(dir, 'gone')}", or point --cache at a folder such as .fw/cache.`,
    ])
  })
})
