/**
 * What builds cut short (Ctrl-C, kill -9) leave in the cache folder is removed by the next build,
 * also when that build finds the cache up to date: before, only a build that changed the routes
 * pruned, and each interrupted build left a generation folder (28 MB for 20,000 routes) for good.
 * A generation published before the current one is kept: running processes may load from it.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = "export default (r) => {\n  r.get('/a', () => 'a', 'a')\n}\n"
const BUILD = ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache']

const generationOf = (cache: string): string =>
  JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8')).generation

/** A generation folder as a build writes it, `ms` after the epoch, with one module in it. */
function fakeGeneration(cache: string, ms: number, hex: string): string {
  const name = `generation-${ms}-${hex}`
  mkdirSync(join(cache, name))
  writeFileSync(join(cache, name, 'index.mjs'), 'export {}\n')
  return name
}

describe('a build that finds the cache up to date', () => {
  it('removes the generations and temp folders builds cut short left since, and keeps the rest', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    expect((await runFw(BUILD, { cwd: dir })).code).toBe(0)
    const cache = join(dir, 'cache')
    const current = generationOf(cache)
    const born = Number(current.split('-')[1])
    // An older one, as the generation before the current one is: running processes may hold it.
    const older = fakeGeneration(cache, born - 60_000, 'aaaaaaaa')
    // What interrupted builds leave: generations written after the current one, a temp folder
    // (the generation before its rename) and a temp entry (router.mjs before its rename).
    const cut = [
      fakeGeneration(cache, born + 1000, 'bbbbbbbb'),
      fakeGeneration(cache, born + 2000, 'cccccccc'),
    ]
    mkdirSync(join(cache, '.tmp-0123456789ab'))
    writeFileSync(join(cache, 'router.mjs.tmp-0123456789ab'), '')

    const result = await runFw(BUILD, { cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/up to date/)
    const left = readdirSync(cache)
    expect(left).toContain(current)
    expect(left).toContain(older)
    for (const name of [...cut, '.tmp-0123456789ab', 'router.mjs.tmp-0123456789ab'])
      expect(left).not.toContain(name)
    expect(generationOf(cache)).toBe(current)
  })
})
