/**
 * The modules a build writes are ASCII when the routes are. V8 keeps a module's source as long as
 * the module lives (ES modules are never unloaded: every generation `fw serve --watch` reloads
 * stays in memory), at one byte a character only while all of them are Latin-1. The em dash of
 * each file's banner doubled them all: ~64 KB more heap per reload of the example app.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
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
