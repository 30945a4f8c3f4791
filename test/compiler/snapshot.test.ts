/**
 * The generated code of a tiny route set, checked in as files under test/fixtures/tiny/expected/
 * so that a change to the emitters shows up in review. Every emitted module is also imported.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'

const FIXTURE = join(import.meta.dirname, '../fixtures/tiny')

afterAll(cleanupTempDirs)

describe('generated code of the tiny fixture', async () => {
  const cache = join(tempDir(), 'cache')
  const { manifest } = await buildCache({ routesFile: join(FIXTURE, 'routes.ts'), cacheDir: cache })
  const generation = join(cache, manifest.generation)
  const files = readdirSync(generation).sort()

  it('emits one module per shard plus index, routes, names and helpers', () => {
    expect(files).toEqual([
      '__dynamic.mjs',
      '__helpers.mjs',
      '__names.mjs',
      '__root.mjs',
      '__routes.json',
      '__routes.mjs',
      'files.mjs',
      'index.mjs',
      'routes.mjs',
      'users.mjs',
      '{account}.example.com.whoami.mjs',
    ])
  })

  // __helpers.mjs is a verbatim template; routes.mjs is the user's file bundled by esbuild.
  it.each(files.filter((f) => f !== '__helpers.mjs' && f !== 'routes.mjs'))(
    '%s matches its snapshot',
    async (file) => {
      await expect(readFileSync(join(generation, file), 'utf8')).toMatchFileSnapshot(
        join(FIXTURE, 'expected', file),
      )
    },
  )

  it('emits router.d.mts matching its snapshot', async () => {
    await expect(readFileSync(join(cache, 'router.d.mts'), 'utf8')).toMatchFileSnapshot(
      join(FIXTURE, 'expected', 'router.d.mts'),
    )
  })

  it('emits modules that all import and a router that answers', async () => {
    for (const file of files) await import(pathToFileURL(join(generation, file)).href)
    const router = await import(pathToFileURL(join(cache, 'router.mjs')).href)
    expect(router.GENERATION).toBe(manifest.generation)
    expect(router.match('GET', '/users/7/posts/hello-world').params).toEqual({
      id: 7,
      slug: 'hello-world',
    })
    expect(router.match('GET', '/whoami', 'acme.example.com').params).toEqual({ account: 'acme' })
    expect(router.match('GET', '/whoami').route.name).toBe('page')
    expect(router.urlFor('tenant.whoami', { account: 'acme' }, {}, true)).toBe(
      'http://acme.example.com/whoami',
    )
  })
})
