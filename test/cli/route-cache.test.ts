/** `fw route:cache build` and `fw route:cache clear`, run as the real binary in temp projects. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  runFw,
  runScript,
  writeFiles,
} from '../support/project.js'

const HANDLERS_TS = `export interface Context {
  params: Readonly<Record<string, string | number | null>>
}

export const home = (_c: Context): string => 'home'
export function showUser(c: Context): { id: unknown } {
  return { id: c.params.id }
}
export const listPosts = (): string[] => []
export const about = (c: Context): string => \`about \${String(c.params.locale)}\`
`

// TypeScript syntax on purpose: a type-only import, annotations, an interface, a generic and `as`.
const ROUTES_TS = `import { about, home, listPosts, showUser, type Context } from './handlers.ts'

type Handler = (c: Context) => unknown
interface Registrar {
  get(path: string, handler: Handler, name?: string): unknown
  group(options: { prefix: string; name: string; middleware: string[] }, cb: (r: Registrar) => void): void
}

export default (r: Registrar): void => {
  r.get('/', home, 'home')
  r.get('/users/{id:int}', showUser, 'users.show')
  r.get('/posts', listPosts as Handler, 'posts.index')
  r.group({ prefix: '/api/v1', name: 'v1.', middleware: ['throttle:60,60'] }, (r) => {
    r.get('/users/{id:int}', showUser, 'users.show')
  })
  r.get('/{locale}/about', about, 'about')
}
`

/** A plain JS routes file with one route per path given. */
const plainRoutes = (...paths: string[]): string =>
  `export default (r) => {\n${paths.map((p) => `  r.get('${p}', () => 'ok')`).join('\n')}\n}\n`

const readManifest = (cache: string): Record<string, unknown> & { generation: string } =>
  JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8'))

const generations = (cache: string): string[] =>
  list(cache).filter((n) => n.startsWith('generation-'))

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw route:cache build on a TypeScript routes file with a local import', () => {
  let dir: string
  let cache: string
  let first: Awaited<ReturnType<typeof runFw>>

  beforeAll(async () => {
    dir = makeProject({ 'handlers.ts': HANDLERS_TS, 'routes.ts': ROUTES_TS })
    cache = join(dir, '.fw', 'cache')
    first = await runFw(['route:cache', 'build', '--routes', 'routes.ts', '--cache', '.fw/cache'], {
      cwd: dir,
    })
  })

  it('exits 0 and prints the route and shard counts', () => {
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(
      /built 5 routes, 5 shards in \d+ ms → \.fw\/cache generation-\d+-[0-9a-f]+/,
    )
  })

  it('writes manifest.json, router.mjs, router.d.mts, routes.mjs and one generation folder', () => {
    const manifest = readManifest(cache)
    expect(list(cache)).toEqual(
      [manifest.generation, 'manifest.json', 'router.d.mts', 'router.mjs', 'routes.mjs'].sort(),
    )
    expect(manifest).toMatchObject({
      formatVersion: 3,
      generation: expect.stringMatching(/^generation-\d+-[0-9a-f]+$/),
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      routeCount: 5,
    })
    expect(readFileSync(join(cache, 'router.mjs'), 'utf8')).toContain(
      `./${manifest.generation}/index.mjs`,
    )
    expect(readFileSync(join(cache, 'router.d.mts'), 'utf8')).toContain(
      '"v1.users.show": { "id": number }',
    )
  })

  it('shards the generation by first path segment, with __root and __dynamic', () => {
    const manifest = readManifest(cache) as {
      generation: string
      shards: { file: string; routes: number }[]
    }
    const files = list(join(cache, manifest.generation))
    expect(files).toEqual(expect.arrayContaining(['index.mjs', '__routes.mjs', '__names.mjs']))
    const shardFiles = manifest.shards.map((s) => s.file).sort()
    expect(shardFiles).toEqual(['__dynamic.mjs', '__root.mjs', 'api.mjs', 'posts.mjs', 'users.mjs'])
    expect(files).toEqual(expect.arrayContaining(shardFiles))
    expect(manifest.shards.reduce((sum, s) => sum + s.routes, 0)).toBe(5)
  })

  it('leaves no bundling leftovers next to the routes file', () => {
    expect(list(dir)).toEqual(['.fw', 'handlers.ts', 'routes.ts'])
  })

  it('generates a router.mjs that another node process can import, match and urlFor with', async () => {
    const script = `
      import { match, urlFor, routes } from './.fw/cache/router.mjs'
      const brief = (m) => ('route' in m ? { name: m.route.name, params: m.params } : m)
      console.log(JSON.stringify({
        user: brief(match('GET', '/users/42')),
        v1: match('GET', '/api/v1/users/7').route.middleware,
        locale: brief(match('GET', '/fr/about')),
        head: brief(match('HEAD', '/posts')),
        wrongMethod: match('POST', '/users/42'),
        miss: match('GET', '/nope/a/b'),
        urls: [
          urlFor('users.show', { id: 7 }),
          urlFor('home', {}, { q: 'a b' }),
          urlFor('v1.users.show', { id: 1 }, {}, 'https://example.test'),
        ],
        count: routes.length,
      }))`
    const { code, stdout, stderr } = await runScript(script, { cwd: dir })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({
      user: { name: 'users.show', params: { id: 42 } },
      v1: ['throttle:60,60'],
      locale: { name: 'about', params: { locale: 'fr' } },
      head: { name: 'posts.index', params: {} },
      wrongMethod: { status: 405, allow: ['GET', 'HEAD'] },
      miss: { status: 404 },
      urls: ['/users/7', '/?q=a%20b', 'https://example.test/api/v1/users/1'],
      count: 5,
    })
  })

  it('says "up to date" on a second build with no change and writes no new generation', async () => {
    const before = readFileSync(join(cache, 'manifest.json'), 'utf8')
    const generationsBefore = generations(cache)
    const { code, stdout } = await runFw(
      ['route:cache', 'build', '--routes', 'routes.ts', '--cache', '.fw/cache'],
      { cwd: dir },
    )
    expect(code).toBe(0)
    expect(stdout).toMatch(/up to date 5 routes, 5 shards/)
    expect(generations(cache)).toEqual(generationsBefore)
    expect(readFileSync(join(cache, 'manifest.json'), 'utf8')).toBe(before)
  })

  it('rebuilds a cache of another format version even when the routes did not change', async () => {
    const manifestFile = join(cache, 'manifest.json')
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { formatVersion: number }
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, formatVersion: 999 }))
    const { code, stdout } = await runFw(
      ['route:cache', 'build', '--routes', 'routes.ts', '--cache', '.fw/cache'],
      { cwd: dir },
    )
    expect(code).toBe(0)
    expect(stdout).toMatch(/built 5 routes, 5 shards/)
    expect(JSON.parse(readFileSync(manifestFile, 'utf8')).formatVersion).toBe(
      manifest.formatVersion,
    )
  })
})

describe('fw route:cache build after the routes change', () => {
  it('publishes a new generation each time and keeps only the two newest', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/a') })
    const cache = join(dir, 'cache')
    const build = (): Promise<Awaited<ReturnType<typeof runFw>>> =>
      runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'], { cwd: dir })

    expect((await build()).code).toBe(0)
    const g1 = readManifest(cache).generation

    writeFiles(dir, { 'routes.mjs': plainRoutes('/a', '/b') })
    const second = await build()
    expect(second.stdout).toMatch(/built 2 routes/)
    const g2 = readManifest(cache).generation
    expect(g2).not.toBe(g1)
    expect(generations(cache)).toEqual([g1, g2].sort())

    writeFiles(dir, { 'routes.mjs': plainRoutes('/a', '/b', '/c') })
    expect((await build()).stdout).toMatch(/built 3 routes/)
    const g3 = readManifest(cache).generation
    expect(generations(cache)).toEqual([g2, g3].sort())
    expect(readFileSync(join(cache, 'router.mjs'), 'utf8')).toContain(`./${g3}/index.mjs`)
  })
})

describe('fw route:cache build defaults', () => {
  it('reads routes.ts and writes .fw/cache when given no flags', async () => {
    const dir = makeProject({ 'routes.ts': plainRoutes('/') })
    const { code, stdout } = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(code).toBe(0)
    expect(stdout).toMatch(/built 1 route, 1 shard in \d+ ms → \.fw\/cache /)
    expect(existsSync(join(dir, '.fw', 'cache', 'manifest.json'))).toBe(true)
  })

  it('honours routes and cache from fw.config.ts, for build and for clear', async () => {
    const dir = makeProject({
      'fw.config.ts': `export default { routes: 'app/routes.ts', cache: 'build/cache' }\n`,
      'app/routes.ts': plainRoutes('/from-config'),
    })
    const built = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(built.code).toBe(0)
    expect(built.stdout).toMatch(/built 1 route, 1 shard in \d+ ms → build\/cache /)
    expect(existsSync(join(dir, 'build', 'cache', 'manifest.json'))).toBe(true)
    expect(existsSync(join(dir, '.fw'))).toBe(false)

    const cleared = await runFw(['route:cache', 'clear'], { cwd: dir })
    expect(cleared.code).toBe(0)
    expect(cleared.stdout).toMatch(/cleared build\/cache/)
    expect(existsSync(join(dir, 'build', 'cache'))).toBe(false)
  })

  it('builds a plain `export default (r) => {...}` .mjs file that imports nothing', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/', '/users/{id:int}') })
    const { code, stdout } = await runFw(['route:cache', 'build', '--routes', 'routes.mjs'], {
      cwd: dir,
    })
    expect(code).toBe(0)
    expect(stdout).toMatch(/built 2 routes, 2 shards/)
  })
})

describe('fw route:cache clear', () => {
  it('removes what build wrote, and the cache folder, but nothing beside it', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/'), 'var/keep.txt': 'mine' })
    expect(
      (
        await runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'var/cache'], {
          cwd: dir,
        })
      ).code,
    ).toBe(0)

    const { code, stdout } = await runFw(['route:cache', 'clear', '--cache', 'var/cache'], {
      cwd: dir,
    })
    expect(code).toBe(0)
    expect(stdout).toMatch(/cleared var\/cache \(5 entries removed\)/)
    expect(list(join(dir, 'var'))).toEqual(['keep.txt'])
    expect(readFileSync(join(dir, 'var', 'keep.txt'), 'utf8')).toBe('mine')
  })

  it('keeps a foreign file inside the cache folder, and so the folder', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/') })
    expect(
      (
        await runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'], {
          cwd: dir,
        })
      ).code,
    ).toBe(0)
    writeFileSync(join(dir, 'cache', 'notes.txt'), 'not fw')

    const { code, stdout } = await runFw(['route:cache', 'clear', '--cache', 'cache'], { cwd: dir })
    expect(code).toBe(0)
    expect(stdout).toMatch(/cleared cache/)
    expect(list(join(dir, 'cache'))).toEqual(['notes.txt'])
  })

  it('says "nothing to clear" when there is no cache', async () => {
    const dir = makeProject()
    const { code, stdout } = await runFw(['route:cache', 'clear', '--cache', 'never-built'], {
      cwd: dir,
    })
    expect(code).toBe(0)
    expect(stdout).toMatch(/nothing to clear: no route cache in never-built/)
    expect(list(dir)).toEqual([])
  })

  it('refuses a folder whose manifest.json fw did not write, and removes nothing', async () => {
    const dir = makeProject({ 'site/manifest.json': '{"hello":1}', 'site/router.mjs': 'my own' })
    const { code, stdout, stderr } = await runFw(['route:cache', 'clear', '--cache', 'site'], {
      cwd: dir,
    })
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(lines(stderr)[0]).toMatch(
      /^error ".*manifest\.json" is not a manifest fw wrote \[FW_CACHE_UNSAFE_DIR\]$/,
    )
    expect(lines(stderr)[1]).toMatch(/^ {2}hint: .*nothing was removed/)
    expect(list(join(dir, 'site'))).toEqual(['manifest.json', 'router.mjs'])
  })

  it('keeps entries that only look like what build writes: generation-* of the user, a foreign router.mjs', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/') })
    const build = ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache']
    expect((await runFw(build, { cwd: dir })).code).toBe(0)
    writeFiles(dir, {
      'cache/generation-old/notes.txt': 'mine',
      'cache/generation-x.txt': 'mine too',
      'cache/routes.mjs': '// my own routes, not a build',
    })

    const { code, stdout } = await runFw(['route:cache', 'clear', '--cache', 'cache'], { cwd: dir })
    expect(code).toBe(0)
    expect(stdout).toMatch(/cleared cache \(4 entries removed\)/)
    expect(list(join(dir, 'cache'))).toEqual(['generation-old', 'generation-x.txt', 'routes.mjs'])
    expect(readFileSync(join(dir, 'cache', 'generation-old', 'notes.txt'), 'utf8')).toBe('mine')
  })

  it.each(['../.', '../sub/..', 'ABSOLUTE_PARENT'])(
    'refuses --cache %j, a folder that holds the working directory',
    async (given) => {
      const dir = makeProject({ 'manifest.json': '{}', 'sub/keep.txt': 'mine' })
      const target = given === 'ABSOLUTE_PARENT' ? dir : given
      const { code, stderr } = await runFw(['route:cache', 'clear', '--cache', target], {
        cwd: join(dir, 'sub'),
      })
      expect(code).toBe(1)
      expect(lines(stderr)[0]).toBe(
        `error Refusing to use "${target}" as the route cache directory [FW_CACHE_UNSAFE_DIR]`,
      )
      expect(list(dir)).toEqual(['manifest.json', 'sub'])
    },
  )

  it.each(['/', '.', '..', '', '/proc/fw-cache'])(
    'refuses --cache %j with exit 1',
    async (target) => {
      const dir = makeProject({ 'keep.txt': 'mine' })
      const { code, stdout, stderr } = await runFw(['route:cache', 'clear', '--cache', target], {
        cwd: dir,
      })
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(lines(stderr)[0]).toBe(
        `error Refusing to use "${target}" as the route cache directory [FW_CACHE_UNSAFE_DIR]`,
      )
      expect(lines(stderr)[1]).toMatch(/^ {2}hint: /)
      expect(list(dir)).toEqual(['keep.txt'])
    },
  )
})

describe('fw route:cache build safety', () => {
  it('refuses a --cache folder holding files fw did not write, and leaves them alone', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/'), 'assets/logo.svg': '<svg/>' })
    const { code, stdout, stderr } = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'assets'],
      { cwd: dir },
    )
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(lines(stderr)[0]).toMatch(
      /^error .*holds files fw did not write \(logo\.svg\) \[FW_CACHE_UNSAFE_DIR\]$/,
    )
    expect(lines(stderr)[1]).toMatch(/^ {2}hint: /)
    expect(list(join(dir, 'assets'))).toEqual(['logo.svg'])
  })

  it('refuses a --cache folder under /proc at once (Node 20 would spin creating it)', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/') })
    const { code, stderr } = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', '/proc/fw-cache'],
      { cwd: dir },
    )
    expect(code).toBe(1)
    expect(lines(stderr)[0]).toBe(
      'error Refusing to use "/proc/fw-cache" as the route cache directory [FW_CACHE_UNSAFE_DIR]',
    )
  })

  it('rejects --matcher other', async () => {
    const dir = makeProject({ 'routes.mjs': plainRoutes('/') })
    for (const action of ['build', 'clear']) {
      const { code, stderr } = await runFw(['route:cache', action, '--matcher', 'other'], {
        cwd: dir,
      })
      expect(code).toBe(1)
      expect(stderr).toContain("argument 'other' is invalid. Allowed choices are sharded.")
    }
    expect(list(dir)).toEqual(['routes.mjs'])
  })
})
