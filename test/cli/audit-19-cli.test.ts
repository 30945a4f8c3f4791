/**
 * Audit 19 (CLI and generated-cache contract, as an outside test-writer): `fw route:cache build`
 * writing over a folder's own files, a routes file ending the process, a cache folder an OS
 * dropped a metadata file in, an "up to date" build that leaves manifest.json's inputs stale, and
 * user errors said as a bug in fw or without the file that set the value. The last block pins
 * contract points the other CLI tests do not (host shards, odd cache paths, JSON and .js imports).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isCacheFresh } from '../../src/runtime/load-router.js'
import type { Manifest } from '../../src/shared/cache-format.js'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  REPO_ROOT,
  runFw,
  runScript,
  writeFiles,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.get('/users/{id:int}', () => 'user', 'users.show')
}
`
const build = (cwd: string, ...flags: string[]) =>
  runFw(['route:cache', 'build', '--routes', 'routes.mjs', ...flags], { cwd })

/** One `error ...` line, then one `  hint: ...` line, and nothing else (no stack). */
function expectOneUserError(stderr: string, line: RegExp): void {
  const [first, hint, ...rest] = lines(stderr)
  expect(first).toMatch(line)
  expect(hint).toMatch(/^ {2}hint: /)
  expect(rest).toEqual([])
  expect(stderr).not.toMatch(/looks like a bug in fw|\n\s+at /)
}

describe('fw route:cache build into a folder holding files named like its own', () => {
  // clear keeps a router.mjs without fw's banner and refuses a manifest.json fw did not write
  // (route-cache.test.ts); build took the same names for its own and wrote over them.
  it("refuses a folder of the user's router.mjs and routes.mjs, and leaves them as they were", async () => {
    const mine = {
      'src/router/router.mjs': '// my own router: hand-written, not generated\nexport {}\n',
      'src/router/routes.mjs': 'export default [] // my own route list\n',
    }
    const dir = makeProject({ 'routes.mjs': ROUTES, ...mine })
    const { code, stdout, stderr } = await build(dir, '--cache', 'src/router')
    expect(code, stdout).toBe(1)
    expectOneUserError(stderr, /^error .*src\/router.* \[FW_CACHE_UNSAFE_DIR\]$/)
    for (const [name, text] of Object.entries(mine))
      expect(readFileSync(join(dir, name), 'utf8')).toBe(text)
    expect(list(join(dir, 'src/router'))).toEqual(['router.mjs', 'routes.mjs'])
  })

  it("refuses a folder whose manifest.json is not fw's (a web app manifest), and leaves it", async () => {
    const webManifest = '{ "name": "My PWA", "start_url": "/", "icons": [] }\n'
    const dir = makeProject({ 'routes.mjs': ROUTES, 'public/manifest.json': webManifest })
    const { code, stderr } = await build(dir, '--cache', 'public')
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error .*public.* \[FW_CACHE_UNSAFE_DIR\]$/)
    expect(readFileSync(join(dir, 'public/manifest.json'), 'utf8')).toBe(webManifest)
  })
})

describe('fw route:cache build over a manifest.json of its own that a full disk cut short', () => {
  // Told apart from a user's manifest.json by fw's other files beside it: rebuilt, not refused.
  it.each([
    ['cut short', '{ "formatVersion": 3, "gener'],
    ['emptied', ''],
  ])('builds again over a manifest %s', async (_, text) => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    expect((await build(dir)).code).toBe(0)
    writeFileSync(join(dir, '.fw/cache/manifest.json'), text)
    const again = await build(dir)
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    const manifest = JSON.parse(readFileSync(join(dir, '.fw/cache/manifest.json'), 'utf8'))
    expect(manifest.routeCount).toBe(2)
  })
})

describe('fw route:cache build --routes naming a named pipe', () => {
  // The build read it for ever: a FIFO has no end until something writes and closes it.
  it.runIf(process.platform !== 'win32')('is a user error at once, not a hang', async () => {
    const dir = makeProject({})
    execFileSync('mkfifo', [join(dir, 'routes.mjs')])
    const { code, stderr } = await build(dir)
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error routes\.mjs is not a regular file \[FW_ROUTES_NOT_FOUND\]$/)
  })
})

describe('fw route:cache build where an OS left a metadata file in the cache folder', () => {
  // macOS Finder writes .DS_Store into every folder it shows; clear keeps it (not fw's), so the
  // folder stays, and the next build refused the very folder it had built into.
  it('builds again after a clear that kept a .DS_Store', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    expect((await build(dir)).code).toBe(0)
    writeFileSync(join(dir, '.fw/cache/.DS_Store'), '\0\0\0\x01Bud1')
    const cleared = await runFw(['route:cache', 'clear'], { cwd: dir })
    expect(cleared.code, cleared.stderr).toBe(0)
    expect(list(join(dir, '.fw/cache'))).toEqual(['.DS_Store'])
    const again = await build(dir)
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(list(join(dir, '.fw/cache'))).toContain('manifest.json')
  })
})

describe('a routes file that ends the process while fw loads it', () => {
  // `fw route:cache build` exited 0 without a word and without a cache: a CI step passed, the
  // deploy then had no cache.
  it.each([
    ['at import', "process.exit(0)\nexport default (r) => {\n  r.get('/a', () => 1)\n}\n", 1],
    [
      'in its routes function',
      "export default (r) => {\n  r.get('/a', () => 1)\n  process.exit(0)\n}\n",
      3,
    ],
  ])('%s is a user error at that line, exit 1, not a silent success', async (_, text, line) => {
    const dir = makeProject({ 'routes.mjs': text })
    const { code, stdout, stderr } = await build(dir)
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expectOneUserError(stderr, new RegExp(`^error routes\\.mjs:${line}:\\d+: .*process\\.exit`))
    expect(list(dir)).toEqual(['routes.mjs'])
  })
})

describe('fw route:cache build after an edit that leaves the bundle the same (a comment)', () => {
  // "up to date" kept the previous manifest, whose inputs hold the file's old sha256:
  // isCacheFresh() then answered false after every build until the routes really changed.
  it('records the sources as they are now, so isCacheFresh() is true again', async () => {
    const dir = makeProject({
      'routes.mjs': "export default (r) => {\n  r.get('/a', () => 1) // TOOD\n}\n",
    })
    const cache = join(dir, '.fw/cache')
    expect((await build(dir)).code).toBe(0)
    expect(isCacheFresh(cache)).toBe(true)
    writeFiles(dir, {
      'routes.mjs': "export default (r) => {\n  r.get('/a', () => 1) // TODO\n}\n",
    })
    expect(isCacheFresh(cache)).toBe(false)
    const again = await build(dir)
    expect(again.code, again.stderr).toBe(0)
    expect(isCacheFresh(cache)).toBe(true)
  })
})

describe('--cache paths the file system cannot take', () => {
  it.each([
    ['a name longer than the file system allows (ENAMETOOLONG)', () => 'x'.repeat(300)],
    [
      'a link that points at itself (ELOOP)',
      (dir: string) => (symlinkSync('loop', join(dir, 'loop')), 'loop/cache'),
    ],
  ])('%s is FW_CACHE_WRITE naming the folder, not "a bug in fw"', async (_, cacheOf) => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const { code, stderr } = await build(dir, '--cache', cacheOf(dir))
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error Cannot write the route cache to ".+": .*\[FW_CACHE_WRITE\]$/)
  })

  it('fw init DIR of a name too long is FW_INIT_WRITE, not "a bug in fw"', async () => {
    const dir = makeProject()
    const { code, stderr } = await runFw(['init', 'x'.repeat(300)], { cwd: dir })
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error Cannot create the app in .+\[FW_INIT_WRITE\]$/)
  })
})

describe('a value set in fw.config.ts that fw cannot use', () => {
  it('a routes path that does not exist names fw.config.ts and its line, and never says to create routes.ts', async () => {
    const dir = makeProject({
      'fw.config.ts': "export default {\n  routes: 'app/routes.ts',\n}\n",
    })
    for (const args of [['route:cache', 'build'], ['routes:list']]) {
      const { code, stderr } = await runFw(args, { cwd: dir })
      expect(code).toBe(1)
      expectOneUserError(stderr, /^error .*app\/routes\.ts.*\[FW_ROUTES_NOT_FOUND\]$/)
      expect(stderr).toMatch(/fw\.config\.ts(:2)?/)
      expect(stderr).not.toContain('create routes.ts')
    }
  })

  it('fw user:create with a DATABASE_URL of another kind names fw.config.ts, not only DATABASE_URL', async () => {
    // The config wins over the environment: "Set DATABASE_URL" alone sends the user to a
    // variable that changes nothing.
    const dir = makeProject({
      'fw.config.ts': "export default {\n  DATABASE_URL: 'mysql://localhost/app',\n}\n",
    })
    const { code, stderr } = await runFw(
      ['user:create', '--email', 'ada@example.com', '--name', 'Ada', '--password-stdin'],
      { cwd: dir, input: 'correct horse battery\n' },
    )
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error .*mysql:\/\/localhost\/app.*\[FW_USER_INVALID\]$/)
    expect(stderr).toContain('fw.config.ts')
  })
})

describe('a routes file importing fw where fw is not installed and no package.json lists it', () => {
  // init.ts: 'the "fw" name on the npm registry is another project'. The hint sent the user there.
  it('does not tell the user to `npm install fw`', async () => {
    const dir = makeProject({
      'routes.ts':
        "import { defineRoutes } from 'fw'\nexport default defineRoutes((r) => {\n  r.get('/', () => 1)\n})\n",
    })
    const { code, stderr } = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error routes\.ts:1:\d+: .*'fw'.*\[FW_ROUTES_LOAD\]$/)
    expect(stderr).not.toContain('npm install fw')
  })
})

// Contract points the other CLI tests leave open; these pass today.
describe('the cache layout of a table with a domain group', () => {
  let cache: string
  let manifest: Manifest

  beforeAll(async () => {
    const dir = makeProject({
      'routes.mjs': `export default (r) => {
  r.get('/', () => 1, 'home')
  r.get('/users/{id:int}', () => 1, 'users.show')
  r.group({ domain: '{account}.example.com' }, (r) => {
    r.get('/whoami', () => 1, 'whoami')
  })
  r.get('/{locale}/about', () => 1, 'about')
}
`,
    })
    const built = await build(dir)
    expect(built.code, built.stderr).toBe(0)
    expect(built.stdout).toMatch(
      /^✔ built 4 routes, 4 shards in \d+ ms → \.fw\/cache generation-\d+-[0-9a-f]{8}\n$/,
    )
    cache = join(dir, '.fw/cache')
    manifest = JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8'))
  })

  it('names a domain shard <host>.<bucket>.mjs and gives it its host in the manifest', () => {
    expect(manifest.shards).toContainEqual(
      expect.objectContaining({
        file: '{account}.example.com.whoami.mjs',
        host: '{account}.example.com',
        bucket: 'whoami',
        routes: 1,
      }),
    )
    expect(
      manifest.shards
        .filter((s) => s.host === null)
        .map((s) => s.file)
        .sort(),
    ).toEqual(['__dynamic.mjs', '__root.mjs', 'users.mjs'])
  })

  it("records each shard's sha256 of the file as written, the format, the route count and the generation", () => {
    expect(manifest.formatVersion).toBe(3)
    expect(manifest.routeCount).toBe(4)
    expect(manifest.fingerprint).toMatch(/^[0-9a-f]{64}$/)
    expect(manifest.contentHash).toMatch(/^[0-9a-f]{64}$/)
    const folder = join(cache, manifest.generation)
    for (const shard of manifest.shards) {
      const text = readFileSync(join(folder, shard.file))
      expect(createHash('sha256').update(text).digest('hex'), shard.file).toBe(shard.sha256)
    }
    expect(list(folder)).toContain('__names.mjs')
    expect(readFileSync(join(cache, 'router.mjs'), 'utf8')).toContain(
      `./${manifest.generation}/index.mjs`,
    )
  })
})

describe('a cache folder whose path has spaces, "#" and "%20"', () => {
  it('builds, is up to date when named by its absolute path, and boots a kernel', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const relative = 'my cache #1 %20'
    const first = await build(dir, '--cache', relative)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain(`built 2 routes, 2 shards`)
    expect(first.stdout).toContain(`→ ${relative} generation-`)
    const again = await build(dir, '--cache', join(dir, relative))
    expect(again.stdout).toMatch(/^✔ up to date 2 routes/)
    const booted = await runScript(
      `import { pathToFileURL } from 'node:url'
       const { Kernel } = await import(${JSON.stringify(join(REPO_ROOT, 'dist/runtime/index.js'))})
       const { default: register } = await import(pathToFileURL(${JSON.stringify(relative)} + '/routes.mjs').href)
       const kernel = await Kernel.boot({ routeCache: ${JSON.stringify(relative)}, register })
       console.log(JSON.stringify(kernel.router.match('GET', '/users/7').params))`,
      { cwd: dir },
    )
    expect(booted.stderr).toBe('')
    expect(booted.stdout.trim()).toBe('{"id":7}')
  })
})

describe('a routes file importing a JSON file and a .js helper', () => {
  it('records all three as inputs, and a change to the JSON alone is a new build', async () => {
    const dir = makeProject({
      'routes.ts': `import data from './paths.json'
import { handler } from './lib/helper.js'
export default (r: { get(p: string, h: unknown): void }): void => {
  for (const path of data.paths) r.get(path, handler)
}
`,
      'paths.json': '{ "paths": ["/one", "/two/{id:int}"] }\n',
      'lib/helper.js': 'export const handler = () => "ok"\n',
    })
    const first = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(first.code, first.stderr).toBe(0)
    const inputs = () =>
      Object.keys(
        JSON.parse(readFileSync(join(dir, '.fw/cache/manifest.json'), 'utf8')).inputs,
      ).sort()
    expect(inputs()).toEqual(['../../lib/helper.js', '../../paths.json', '../../routes.ts'])
    writeFiles(dir, { 'paths.json': '{ "paths": ["/one", "/two/{id:int}", "/three"] }\n' })
    const second = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(second.stdout).toMatch(/^✔ built 3 routes/)
  })

  it('places a syntax error of the JSON file in that file, naming the routes file that imports it', async () => {
    const dir = makeProject({
      'routes.ts':
        "import data from './paths.json'\nexport default (r) => { r.get(data.path, () => 1) }\n",
      'paths.json': '{\n  "path": "/x",\n}\n',
    })
    const { code, stderr } = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(code).toBe(1)
    expectOneUserError(stderr, /^error paths\.json:2:\d+: .*\[FW_ROUTES_SYNTAX\]$/)
    expect(stderr).toContain('imported by routes.ts')
  })
})
