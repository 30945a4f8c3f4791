/**
 * Regressions found by the second CLI audit, each run through the real `fw` binary in a temp
 * project: output piped into a reader that stops early, config values fw would misread, a missing
 * file inside an installed package, custom aliases that cannot work, an interrupted clear, cache
 * paths that are links to dangerous folders, and routes:list on an empty table.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
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

const ROUTES = `export default (r) => {\n  r.get('/', () => 'home', 'home')\n}\n`

/** Many long routes: far more output than a pipe buffers (64 KiB). */
function manyRoutes(count: number): string {
  const routes = Array.from(
    { length: count },
    (_, i) =>
      `  r.get('/long/path/number/${i}/{id:int}', () => 'x', { name: 'route.${i}.${'x'.repeat(60)}', middleware: ['auth'] })`,
  )
  return `export default (r) => {\n${routes.join('\n')}\n}\n`
}

/** Runs fw and closes its stdout after the first chunk, as `fw ... | head -1` does. */
function runAndCloseEarly(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
    delete env.NODE_OPTIONS
    const child = spawn(process.execPath, [FW_BIN, ...args], { cwd, env, timeout: 30_000 })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.stdout.once('data', () => child.stdout.destroy())
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

describe('fw routes:list piped into a reader that stops early (| head)', () => {
  let dir: string
  beforeAll(() => {
    dir = makeProject({ 'routes.mjs': manyRoutes(2000) })
  })

  it('the table ends quietly with exit code 0, no EPIPE stack', async () => {
    const result = await runAndCloseEarly(['routes:list', '--routes', 'routes.mjs'], dir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  it('so does --json', async () => {
    const result = await runAndCloseEarly(['routes:list', '--routes', 'routes.mjs', '--json'], dir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })
})

describe('fw.config.ts values fw would misread are FW_CONFIG_INVALID at their line', () => {
  const configError = async (config: string): Promise<string[]> => {
    const dir = makeProject({ 'routes.mjs': ROUTES, 'fw.config.ts': config })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    return lines(result.stderr)
  }

  it('a routes path that is not a string (it was "looks like a bug in fw")', async () => {
    expect(await configError(`export default {\n  routes: 123,\n}\n`)).toEqual([
      'error fw.config.ts:2:3: "routes" must be a non-empty path string, not number 123 [FW_CONFIG_INVALID]',
      "  hint: Write routes: 'routes.ts'.",
    ])
  })

  it('a misspelt key, with the key it resembles (it fell back to routes.ts)', async () => {
    expect(await configError(`export default {\n  rotues: 'routes.mjs',\n}\n`)).toEqual([
      'error fw.config.ts:2:3: Unknown key "rotues" in the config file [FW_CONFIG_INVALID]',
      '  hint: Did you mean "routes"?',
    ])
  })

  it('an environment variable at the top level, sent under env', async () => {
    const [error, hint] = await configError(`export default { routes: 'routes.mjs', PORT: 80 }\n`)
    expect(error).toMatch(/^error fw\.config\.ts:1:\d+: Unknown key "PORT" /)
    expect(hint).toContain('env: { PORT: ... }')
  })

  it('an env value that is not text (it became "[object Object]")', async () => {
    const [error] = await configError(
      `export default {\n  routes: 'routes.mjs',\n  env: { LIMITS: { max: 1 } },\n}\n`,
    )
    expect(error).toBe(
      'error fw.config.ts:3:10: The variable LIMITS must be a string, number or boolean, not an object [FW_CONFIG_INVALID]',
    )
  })

  it('no default export, or null (they were ignored)', async () => {
    expect((await configError(`export const routes = 'routes.mjs'\n`))[0]).toBe(
      'error fw.config.ts:1:1: The config file has no default export [FW_CONFIG_INVALID]',
    )
    expect((await configError(`export default null\n`))[0]).toContain('not null')
  })

  it('still accepts every documented key', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'fw.config.ts': `export default {
  routes: 'routes.mjs',
  cache: 'build/cache',
  APP_ENV: 'development',
  JWT_SECRET: undefined,
  env: { URL_SIGNING_KEYS: 'k1,k2', WORKERS: 2, DEBUG: false },
  kernel: { requestScopeEnabled: true },
}\n`,
    })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(existsSync(join(dir, 'build', 'cache', 'manifest.json'))).toBe(true)
  })
})

describe('a routes file importing a file an installed package does not have', () => {
  it('is FW_ROUTES_LOAD at the import, not an error about the temporary bundle', async () => {
    const dir = makeProject({
      'node_modules/pkg/package.json': '{"name":"pkg","type":"module","main":"index.js"}\n',
      'node_modules/pkg/index.js': "export const h = () => 'pkg'\n",
      'routes.ts': `\nimport h from 'pkg/nope.js'\nexport default (r: any) => {\n  r.get('/', h)\n}\n`,
    })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      "error routes.ts:2:1: routes.ts imports 'pkg/nope.js', which the installed package 'pkg' does not provide [FW_ROUTES_LOAD]",
      expect.stringMatching(/^ {2}hint: Check the path after 'pkg'/),
    ])
  })

  it('a subpath the package does not export is the same error', async () => {
    const dir = makeProject({
      'node_modules/pkg/package.json':
        '{"name":"pkg","type":"module","exports":{".":"./index.js"}}\n',
      'node_modules/pkg/index.js': "export const h = () => 'pkg'\n",
      'routes.ts': `import { h } from 'pkg/internal'\nexport default (r: any) => {\n  r.get('/', h)\n}\n`,
    })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe(
      "error routes.ts:1:1: routes.ts imports 'pkg/internal', which the installed package 'pkg' does not provide [FW_ROUTES_LOAD]",
    )
  })
})

describe('r.alias() refuses what could never work when the server starts', () => {
  const build = async (routes: string): Promise<string[]> => {
    const dir = makeProject({ 'routes.mjs': routes })
    const result = await runFw(['route:cache', 'build', '--routes', 'routes.mjs'], { cwd: dir })
    expect(result.code).toBe(1)
    return lines(result.stderr)
  }

  it('a middleware that is not a function (alias("auth", 5) silently kept the built-in)', async () => {
    const [error] = await build(
      `export default (r) => {\n  r.alias('auth', 5)\n  r.get('/', () => 'x', { middleware: ['auth'] })\n}\n`,
    )
    expect(error).toBe(
      'error routes.mjs:2:5: alias("auth"): the middleware must be a function, not number [FW_MIDDLEWARE_INVALID]',
    )
  })

  it('a name with ":" (a route naming it was "unknown alias")', async () => {
    const [error] = await build(
      `export default (r) => {\n  r.alias('tenant:x', () => {})\n  r.get('/', () => 'x')\n}\n`,
    )
    expect(error).toBe(
      'error routes.mjs:2:5: alias(): "tenant:x" is not a middleware alias name [FW_MIDDLEWARE_INVALID]',
    )
  })
})

describe('fw route:cache clear without a manifest', () => {
  it('finishes a clear that was cut short after removing the manifest', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const cache = join(dir, '.fw', 'cache')
    expect(
      (await runFw(['route:cache', 'build', '--routes', 'routes.mjs'], { cwd: dir })).code,
    ).toBe(0)
    writeFileSync(join(cache, 'notes.txt'), 'mine')
    // What an interrupted clear leaves: the manifest went first.
    rmSync(join(cache, 'manifest.json'))
    const result = await runFw(['route:cache', 'clear'], { cwd: dir })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/cleared \.fw\/cache \(\d+ entries removed\)/)
    expect(list(cache)).toEqual(['notes.txt'])
  })

  it('leaves a folder without fw-written files alone, its router.mjs included', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'out/router.mjs': 'export const mine = 1\n',
      'out/generation-1-0123abcd/index.mjs': 'export const mine = 2\n',
    })
    const result = await runFw(['route:cache', 'clear', '--cache', 'out'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('nothing to clear')
    expect(list(join(dir, 'out'))).toEqual(['generation-1-0123abcd', 'router.mjs'])
  })
})

describe('--cache given as a link to a folder fw must never clear', () => {
  it.each([
    ['/', '/'],
    ['the project folder', '.'],
  ])('refuses a link to %s, for build and clear', async (_, target) => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    mkdirSync(join(dir, 'links'))
    symlinkSync(target === '.' ? dir : target, join(dir, 'links', 'cache'))
    for (const action of ['build', 'clear']) {
      const result = await runFw(
        ['route:cache', action, '--routes', 'routes.mjs', '--cache', 'links/cache'],
        { cwd: dir },
      )
      expect(result.code).toBe(1)
      expect(lines(result.stderr)[0]).toMatch(
        /^error Refusing to use "(.*\/)?links\/cache" \(a link to ".+"\) as the route cache directory \[FW_CACHE_UNSAFE_DIR\]$/,
      )
    }
  })
})

describe('fw routes:list on an empty route table', () => {
  it('names the routes file, as build does', async () => {
    const dir = makeProject({ 'routes.mjs': 'export default (r) => {}\n' })
    const result = await runFw(['routes:list', '--routes', 'routes.mjs'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe(
      'error routes.mjs:1:1: The routes file registers no routes [FW_ROUTES_EMPTY]',
    )
  })
})
