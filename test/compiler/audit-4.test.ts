/**
 * Regressions found by the fourth CLI audit, in the compiler: a first path segment named like a
 * file of the generation, an "up to date" cache missing files a server imports, the hint for a
 * package the app lists but has not installed, and a thrown value that is not an Error.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildCache, loadRoutesFile } from '../../src/compiler/index.js'
import { GENERATED_MARK } from '../../src/shared/cache-format.js'
import { cleanupProjects, makeProject } from '../support/project.js'

afterAll(cleanupProjects)

describe('a first path segment named "routes"', () => {
  it('gets a shard of its own: the bundled routes file no longer overwrites it', async () => {
    const dir = makeProject({
      'routes.mjs': [
        'export default (r) => {',
        "  r.get('/routes', () => 1, 'list')",
        "  r.post('/routes/{id:int}', () => 2, 'update')",
        '}',
        '',
      ].join('\n'),
    })
    const cache = join(dir, 'cache')
    await buildCache({ routesFile: join(dir, 'routes.mjs'), cacheDir: cache })
    const router = await import(pathToFileURL(join(cache, 'router.mjs')).href)
    // It threw "part(...).bind is not a function": the shard routes.mjs was the routes file.
    await router.load()
    expect(router.match('POST', '/routes/7')).toMatchObject({
      route: { name: 'update' },
      params: { id: 7 },
    })
    const routes = await import(pathToFileURL(join(cache, 'routes.mjs')).href)
    expect(typeof routes.default).toBe('function')
  })
})

describe('fw route:cache build on an unchanged table', () => {
  const ROUTES = "export default (r) => {\n  r.get('/', () => 1, 'home')\n}\n"

  it('writes again the router.d.mts and routes.mjs someone deleted, instead of "up to date"', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const options = { routesFile: join(dir, 'routes.mjs'), cacheDir: join(dir, 'cache') }
    await buildCache(options)
    rmSync(join(dir, 'cache', 'router.d.mts'))
    rmSync(join(dir, 'cache', 'routes.mjs'))
    expect((await buildCache(options)).written).toBe(true)
    expect((await buildCache(options)).written).toBe(false) // and then it is up to date
    for (const name of ['router.d.mts', 'routes.mjs'])
      expect(readFileSync(join(dir, 'cache', name), 'utf8')).toMatch(
        new RegExp(`^${GENERATED_MARK.replace(/[`()]/g, '\\$&')}`),
      )
  })

  it('and a shard missing from the generation', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const options = { routesFile: join(dir, 'routes.mjs'), cacheDir: join(dir, 'cache') }
    const first = await buildCache(options)
    rmSync(join(dir, 'cache', first.manifest.generation, '__names.mjs'))
    const second = await buildCache(options)
    expect(second.written).toBe(true)
    expect(existsSync(join(dir, 'cache', second.manifest.generation, '__names.mjs'))).toBe(true)
  })
})

describe('a routes file importing a package its package.json lists but that is not installed', () => {
  it('says to run npm install, not `npm install <name>` (which would swap a file: entry for the registry package)', async () => {
    const dir = makeProject({
      'package.json': JSON.stringify({ dependencies: { fw: 'file:../fw' } }),
      'routes.mjs': "import { json } from 'fw'\nexport default (r) => r.get('/', json)\n",
    })
    await expect(loadRoutesFile(join(dir, 'routes.mjs'))).rejects.toMatchObject({
      code: 'FW_ROUTES_LOAD',
      hint: expect.stringMatching(
        /package\.json lists it: run `npm install` \(`npm install fw` would replace that entry with the registry's package\)\.$/,
      ),
    })
  })
})

describe('a routes file throwing something that is not an Error (no stack)', () => {
  it('is located at the default export when the routes function threw it', async () => {
    const dir = makeProject({
      'routes.mjs': "const x = 1\nexport default (r) => {\n  throw 'no routes today'\n}\n",
    })
    await expect(loadRoutesFile(join(dir, 'routes.mjs'))).rejects.toMatchObject({
      code: 'FW_ROUTES_LOAD',
      message: 'The routes file threw while it was run: no routes today',
      location: { file: expect.stringMatching(/routes\.mjs$/), line: 2, column: 1 },
    })
  })

  it('at the top of the file when its module threw it', async () => {
    const dir = makeProject({ 'routes.mjs': 'throw 42\nexport default () => {}\n' })
    await expect(loadRoutesFile(join(dir, 'routes.mjs'))).rejects.toMatchObject({
      message: 'The routes file threw while it was loaded: 42',
      location: { file: expect.stringMatching(/routes\.mjs$/), line: 1, column: 1 },
    })
  })
})
