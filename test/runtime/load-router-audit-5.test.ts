/**
 * Audit 5 of how a built route cache is loaded: a file of the generation deleted or damaged after
 * the build fails the boot with one error naming it and `fw route:cache build` (it used to boot
 * and answer 500, or a wrong 405, on the routes of that file); a booted kernel keeps working when
 * later builds or `route:cache clear` delete its generation; a manifest fw did not write is
 * refused as stale, not a TypeError.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
import { clearCache } from '../../src/compiler/clear-cache.js'
import type { Registrar } from '../../src/define/registrar.js'
import { Kernel } from '../../src/runtime/kernel.js'
import { loadRouter } from '../../src/runtime/load-router.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'

afterAll(cleanupTempDirs)

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.get('/users/{id:int}', () => 'user', 'users.show')
  r.get('/posts/{slug:slug}', () => 'post', 'posts.show')
  r.get('/{page}', () => 'page', 'page')
}
`
const SILENT = { debug() {}, info() {}, warn() {}, error() {} }

/** A fresh cache of ROUTES (with `edit` applied to the routes file). */
async function build(edit = (text: string): string => text) {
  const dir = tempDir()
  const routesFile = join(dir, 'routes.mjs')
  writeFileSync(routesFile, edit(ROUTES))
  const cache = join(dir, 'cache')
  const { manifest, register } = await buildCache({ routesFile, cacheDir: cache })
  return { dir, routesFile, cache, register, generation: join(cache, manifest.generation) }
}

const boot = (cache: string, register: (r: Registrar) => void) =>
  Kernel.boot({ routeCache: cache, register, log: SILENT })

describe('Kernel.boot on a cache one of whose files was damaged after the build', () => {
  const damage: Record<string, [file: string, (path: string) => void]> = {
    'a shard deleted': ['./users.mjs', (path) => rmSync(path)],
    'a shard emptied': ['./users.mjs', (path) => writeFileSync(path, '')],
    'the dynamic shard truncated': [
      './__dynamic.mjs',
      (path) => writeFileSync(path, readFileSync(path, 'utf8').slice(0, 200)),
    ],
    '__names.mjs emptied': ['./__names.mjs', (path) => writeFileSync(path, '')],
    '__routes.mjs deleted': ['__routes.mjs', (path) => rmSync(path)],
    '__helpers.mjs deleted': ['__helpers.mjs', (path) => rmSync(path)],
  }

  it('fails with FW_CACHE_STALE naming __routes.json and the rebuild command when it was truncated', async () => {
    const { cache, register, generation } = await build()
    const file = join(generation, '__routes.json')
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 40))
    const error = await boot(cache, register).catch((e: unknown) => e)
    expect(error).toMatchObject({
      code: 'FW_CACHE_STALE',
      message: expect.stringMatching(
        /damaged: \.\/__routes\.json cannot be loaded \(it is cut short\)/,
      ),
      hint: expect.stringContaining('fw route:cache build'),
    })
  })

  it.each(Object.keys(damage))(
    'fails with FW_CACHE_STALE naming the file and the rebuild command: %s',
    async (name) => {
      const [file, apply] = damage[name]!
      const { cache, register, generation } = await build()
      apply(join(generation, file))
      const error = await boot(cache, register).catch((e: unknown) => e)
      expect(error).toMatchObject({
        code: 'FW_CACHE_STALE',
        message: expect.stringContaining(file.replace('./', '')),
        hint: expect.stringContaining('fw route:cache build'),
      })
    },
  )
})

describe('a kernel booted on a generation that later builds delete', () => {
  it('keeps matching, answering 404 and generating URLs after two rebuilds and a clear', async () => {
    const { routesFile, cache, register } = await build()
    const kernel = await boot(cache, register)
    // Two builds of changed routes: the second deletes the generation this kernel runs on.
    for (const n of [1, 2]) {
      writeFileSync(routesFile, ROUTES.replace("'home')", `'home${n}')`))
      await buildCache({ routesFile, cacheDir: cache })
    }
    expect(await clearCache(cache)).not.toEqual([])

    expect(kernel.router.match('GET', '/users/3')).toMatchObject({
      route: { name: 'users.show' },
      params: { id: 3 },
    })
    expect(kernel.router.match('GET', '/about')).toMatchObject({ route: { name: 'page' } })
    // A miss in a deleted shard was a 405 listing GET and HEAD.
    expect(kernel.router.match('DELETE', '/posts/a/b')).toEqual({ status: 404 })
    expect(kernel.urlFor('posts.show', { slug: 'a-b' })).toBe('/posts/a-b')
  })
})

describe('loadRouter on a manifest fw did not write', () => {
  it.each([
    ['null', 'null'],
    ['a generation outside the cache', '"../elsewhere/generation-1-abcdef12"'],
  ])('refuses %s as FW_CACHE_STALE with the rebuild command', async (_, generation) => {
    const { cache, register } = await build()
    const file = join(cache, 'manifest.json')
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
    writeFileSync(
      file,
      generation === 'null'
        ? 'null'
        : JSON.stringify({ ...manifest, generation: JSON.parse(generation) }),
    )
    const error = await loadRouter(cache, { register }).catch((e: unknown) => e)
    expect(error).toMatchObject({
      code: 'FW_CACHE_STALE',
      hint: expect.stringContaining('fw route:cache build'),
    })
  })
})

describe('router.mjs imported directly, on a damaged cache', () => {
  it('load() rejects its promise, naming the file, rather than throwing at the call', async () => {
    const { cache, generation } = await build()
    rmSync(join(generation, 'posts.mjs'))
    const router = (await import(pathToFileURL(join(cache, 'router.mjs')).href)) as {
      load(): Promise<void>
    }
    let promise: Promise<void> | undefined
    expect(() => (promise = router.load())).not.toThrow()
    await expect(promise).rejects.toMatchObject({
      code: 'FW_CACHE_STALE',
      message: expect.stringMatching(/posts\.mjs cannot be loaded.*fw route:cache build/),
    })
  })

  it('a miss that needs a damaged shard throws its error, not a 405 with a made-up Allow', async () => {
    const { cache, generation } = await build()
    writeFileSync(join(generation, 'posts.mjs'), '')
    const router = (await import(pathToFileURL(join(cache, 'router.mjs')).href)) as {
      match(method: string, path: string): unknown
    }
    expect(() => router.match('DELETE', '/posts/a/b')).toThrow(
      expect.objectContaining({
        code: 'FW_CACHE_STALE',
        message: expect.stringMatching(/posts\.mjs cannot be loaded \(it is empty\)/),
      }),
    )
  })

  it('match() on an emptied shard names the file, not "part(...).bind is not a function"', async () => {
    const { cache, generation } = await build()
    writeFileSync(join(generation, 'users.mjs'), '')
    const router = (await import(pathToFileURL(join(cache, 'router.mjs')).href)) as {
      match(method: string, path: string): unknown
      urlFor(name: string, params?: object): string
    }
    expect(() => router.match('GET', '/users/3')).toThrow(
      expect.objectContaining({
        code: 'FW_CACHE_STALE',
        message: expect.stringMatching(/users\.mjs cannot be loaded \(it is empty\)/),
      }),
    )
  })
})
