/**
 * The modules a build writes are ASCII. V8 keeps a module's source as long as the module lives
 * (ES modules are never unloaded: every generation `fw serve --watch` reloads stays in memory),
 * at one byte a character only while all of them are Latin-1. The em dash of each file's banner
 * doubled them all: ~64 KB more heap per reload of the example app; a route name, constraint or
 * host beyond ASCII (`über`) still did so for the modules holding it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter } from '../../src/compiler/build.js'
import { buildCache } from '../../src/compiler/index.js'
import { writeCache } from '../../src/compiler/write-cache.js'
import { collectRoutes } from '../../src/define/registrar.js'
import { REPO_ROOT } from '../support/project.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'

afterAll(cleanupTempDirs)

/** The lines of `text` holding a character outside ASCII, with their line numbers. */
const nonAscii = (text: string): string[] =>
  text
    .split('\n')
    .map((line, i) => `${i + 1}: ${line}`)
    .filter((line) => /[^\x00-\x7f]/.test(line))

describe('the files of a build of ASCII routes', () => {
  it('hold only ASCII: the example app, every module of its generation and the entries', async () => {
    const cache = join(tempDir(), 'cache')
    const { manifest } = await buildCache({
      routesFile: join(REPO_ROOT, 'routes.example.ts'),
      cacheDir: cache,
    })
    const generation = join(cache, manifest.generation)
    const files = [
      ...readdirSync(generation).map((name) => join(generation, name)),
      ...['router.mjs', 'routes.mjs', 'router.d.mts'].map((name) => join(cache, name)),
    ]
    expect(files.some((file) => file.endsWith('__helpers.mjs'))).toBe(true)
    const found = Object.fromEntries(
      files
        .map((file): [string, string[]] => [
          file.slice(cache.length + 1),
          nonAscii(readFileSync(file, 'utf8')),
        ])
        .filter(([, lines]) => lines.length > 0),
    )
    expect(found).toEqual({})
  })
})

describe('the files of a build of routes beyond ASCII', () => {
  it('hold their names, constraints and hosts as \\u escapes, and match and generate URLs alike', async () => {
    const cache = join(tempDir(), 'cache')
    const register = collectRoutes((r) => {
      r.get('/tags/{tag:[a-zé]+}', () => 1, 'über.tags')
      r.group({ domain: '{shop}.bücher.test' }, (r) => r.get('/h/{id}', () => 1, 'shop'))
    })
    const { manifest } = await writeCache(cache, buildRouter(register.routes))
    const generation = join(cache, manifest.generation)
    const modules = readdirSync(generation).filter((name) => name.endsWith('.mjs'))
    const found = modules.filter(
      (name) => nonAscii(readFileSync(join(generation, name), 'utf8')).length > 0,
    )
    expect(found).toEqual([])
    const router = (await import(pathToFileURL(join(generation, 'index.mjs')).href)) as {
      match(method: string, path: string): unknown
      urlFor(name: string, params: object): string
    }
    expect(router.match('GET', '/tags/café')).toMatchObject({
      route: { name: 'über.tags' },
      params: { tag: 'café' },
    })
    expect(router.urlFor('über.tags', { tag: 'cafe' })).toBe('/tags/cafe')
  })
})
