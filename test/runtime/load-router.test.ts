/**
 * loadRouter() serves a cache built by the real CLI, and refuses one that is missing, of another
 * format, or built from other routes: a stale cache is never used silently.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Registrar } from '../../src/define/registrar.js'
import { isCacheFresh, loadRouter } from '../../src/runtime/load-router.js'
import { FwError } from '../../src/shared/errors.js'
import {
  assertBuilt,
  cleanupProjects,
  makeProject,
  REPO_ROOT,
  runFw,
  writeFiles,
} from '../support/project.js'

const HANDLERS = `export const home = () => 'home'
export const showUser = () => 'user'
`

const ROUTES = `import { home, showUser } from './handlers.mjs'

export default (r) => {
  r.get('/', home, 'home')
  r.group({ prefix: '/users', name: 'users.', middleware: ['auth'] }, (r) => {
    r.get('/{id:int}', showUser, 'show')
  })
}
`

type Register = (r: Registrar) => void
// Named as the routes file's handlers are: what the cache's route table shows of them.
const home = (): string => 'home'
const showUser = (): string => 'user'
const listUsers = (): string => 'users'

/** The same routes as ROUTES, with one thing changed. */
const CHANGED: Record<string, Register> = {
  'a route is added': (r) => {
    r.get('/', home, 'home')
    r.group({ prefix: '/users', name: 'users.', middleware: ['auth'] }, (r) => {
      r.get('/{id:int}', showUser, 'show')
    })
    r.get('/about', home, 'about')
  },
  'a route is renamed': (r) => {
    r.get('/', home, 'index')
    r.group({ prefix: '/users', name: 'users.', middleware: ['auth'] }, (r) => {
      r.get('/{id:int}', showUser, 'show')
    })
  },
  'a middleware changes': (r) => {
    r.get('/', home, 'home')
    r.group({ prefix: '/users', name: 'users.', middleware: ['auth', 'throttle:5,60'] }, (r) => {
      r.get('/{id:int}', showUser, 'show')
    })
  },
  // The cache's route table shows `showUser()`: left in place, it would say what no longer runs.
  'a handler changes': (r) => {
    r.get('/', home, 'home')
    r.group({ prefix: '/users', name: 'users.', middleware: ['auth'] }, (r) => {
      r.get('/{id:int}', listUsers, 'show')
    })
  },
}

const STALE = {
  code: 'FW_CACHE_STALE',
  hint: expect.stringContaining('fw route:cache build'),
}

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('loadRouter', () => {
  let dir: string
  let cache: string
  let register: Register

  beforeAll(async () => {
    dir = makeProject({ 'handlers.mjs': HANDLERS, 'routes.mjs': ROUTES })
    cache = join(dir, 'cache')
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: dir },
    )
    expect(built.code, built.stderr).toBe(0)
    register = (
      (await import(pathToFileURL(join(dir, 'routes.mjs')).href)) as { default: Register }
    ).default
  })

  it('matches and generates URLs with the routes the cache was built from', async () => {
    const router = await loadRouter(cache, { register })
    expect(router.match('GET', '/users/42')).toMatchObject({
      route: { name: 'users.show', middleware: ['auth'] },
      params: { id: 42 },
    })
    expect(router.match('GET', '/users/x')).toEqual({ status: 404 })
    expect(router.urlFor('users.show', { id: 7 }, { tab: 'a' })).toBe('/users/7?tab=a')
    expect(router.records?.map((r) => r.name)).toEqual(['home', 'users.show'])
    expect(router.manifest.routeCount).toBe(2)
  })

  it('loads without a routes function (no fingerprint check)', async () => {
    const router = await loadRouter(cache)
    expect(router.routes.map((r) => r.path)).toEqual(['/', '/users/{id:int}'])
    expect(router.records).toBeNull()
  })

  it('accepts the same routes registered again with handlers of the same names', async () => {
    const same: Register = (r) => {
      r.get('/', home, 'home')
      r.group({ prefix: '/users', name: 'users.', middleware: ['auth'] }, (r) => {
        r.get('/{id:int}', showUser, 'show')
      })
    }
    const router = await loadRouter(cache, { register: same })
    expect(router.routes.map((r) => r.handler)).toEqual(['home()', 'showUser()'])
  })

  it.each(Object.keys(CHANGED))(
    'refuses a stale cache when %s, naming the rebuild command',
    async (change) => {
      const error = await loadRouter(cache, { register: CHANGED[change]! }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(FwError)
      expect(error).toMatchObject(STALE)
    },
  )

  it('reports FW_CACHE_MISSING when nothing was built', async () => {
    const error = await loadRouter(join(dir, 'never-built'), { register }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FwError)
    expect(error).toMatchObject({
      code: 'FW_CACHE_MISSING',
      hint: expect.stringContaining('fw route:cache build'),
    })
  })

  it('refuses a manifest of another format version as stale', async () => {
    const other = makeProject({ 'routes.mjs': ROUTES, 'handlers.mjs': HANDLERS })
    expect(
      (
        await runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'], {
          cwd: other,
        })
      ).code,
    ).toBe(0)
    const file = join(other, 'cache', 'manifest.json')
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { formatVersion: number }
    writeFileSync(file, JSON.stringify({ ...manifest, formatVersion: manifest.formatVersion + 1 }))

    const error = await loadRouter(join(other, 'cache'), { register }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FwError)
    expect(error).toMatchObject(STALE)
    expect(isCacheFresh(join(other, 'cache'))).toBe(false)
  })

  it('fails the load, naming the file and the rebuild command, when a file of the generation was deleted after the build', async () => {
    const other = makeProject({ 'routes.mjs': ROUTES, 'handlers.mjs': HANDLERS })
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: other },
    )
    expect(built.code, built.stderr).toBe(0)
    const manifest = JSON.parse(readFileSync(join(other, 'cache', 'manifest.json'), 'utf8')) as {
      generation: string
    }
    const generation = join(other, 'cache', manifest.generation)
    rmSync(join(generation, '__names.mjs'))
    rmSync(join(generation, 'users.mjs'))

    // At load, not at the first request that needs the file: the boot fails, naming it.
    await expect(loadRouter(join(other, 'cache'), { register })).rejects.toMatchObject({
      code: 'FW_CACHE_STALE',
      message: expect.stringMatching(
        /route cache is damaged: \.\/(?:__names|users)\.mjs cannot be loaded.*fw route:cache build/,
      ),
    })
  })

  it('names the Node.js version, not a damaged cache, where require() cannot load ES modules', () => {
    const loader = pathToFileURL(join(REPO_ROOT, 'dist/runtime/load-router.js')).href
    const script = `import { loadRouter } from ${JSON.stringify(loader)}
loadRouter(${JSON.stringify(cache)}).catch((e) => { console.log(JSON.stringify({ code: e.code, message: e.message })) })`
    // What Node 21 and 22.0-22.11 do by default.
    const run = spawnSync(
      process.execPath,
      ['--no-experimental-require-module', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    )
    expect(JSON.parse(run.stdout)).toEqual({
      code: 'FW_SERVE_CONFIG',
      message: `fw needs Node.js 20.19+ or 22.12+, where require() loads ES modules (this is ${process.version})`,
    })
  })

  it('serves the generation the manifest names now when builds pruned the one it named at first', async () => {
    const other = makeProject({ 'routes.mjs': ROUTES, 'handlers.mjs': HANDLERS })
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: other },
    )
    expect(built.code, built.stderr).toBe(0)
    const file = join(other, 'cache', 'manifest.json')
    const published = readFileSync(file, 'utf8')
    // The manifest named this generation when the boot read it; while the boot loads it, two
    // builds publish and prune it (its load() stands in for them: it puts the published manifest
    // back, then fails as a pruned shard does).
    const pruned = 'generation-1-0badc0de'
    mkdirSync(join(other, 'cache', pruned))
    writeFileSync(
      join(other, 'cache', pruned, 'index.mjs'),
      `import { writeFileSync } from 'node:fs'
export async function load() {
  writeFileSync(${JSON.stringify(file)}, ${JSON.stringify(published)})
  throw Object.assign(new Error('Cannot find module ./users.mjs'), { code: 'ERR_MODULE_NOT_FOUND' })
}
`,
    )
    writeFileSync(file, JSON.stringify({ ...JSON.parse(published), generation: pruned }))

    const router = await loadRouter(join(other, 'cache'), { register })
    expect(router.match('GET', '/users/7')).toMatchObject({ params: { id: 7 } })
    expect(router.manifest.generation).toBe(JSON.parse(published).generation)
  })
})

describe('isCacheFresh', () => {
  it('is true after a build and false once the routes file changes', async () => {
    const dir = makeProject({ 'handlers.mjs': HANDLERS, 'routes.mjs': ROUTES })
    const cache = join(dir, 'cache')
    expect(isCacheFresh(cache)).toBe(false)
    expect(
      (
        await runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'], {
          cwd: dir,
        })
      ).code,
    ).toBe(0)
    expect(isCacheFresh(cache)).toBe(true)

    writeFiles(dir, { 'routes.mjs': ROUTES.replace("'home')", "'start')") })
    expect(isCacheFresh(cache)).toBe(false)
  })

  it('is false once a module the routes file imports changes', async () => {
    const dir = makeProject({ 'handlers.mjs': HANDLERS, 'routes.mjs': ROUTES })
    const cache = join(dir, 'cache')
    expect(
      (
        await runFw(['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'], {
          cwd: dir,
        })
      ).code,
    ).toBe(0)
    expect(isCacheFresh(cache)).toBe(true)

    writeFiles(dir, { 'handlers.mjs': HANDLERS + `export const extra = () => 'extra'\n` })
    expect(isCacheFresh(cache)).toBe(false)
  })
})
