/**
 * A build keeps the generation published before its own for processes still running on it (they
 * load shards on first use). A build that found the cache up to date told that one from what
 * builds cut short left by the time in the names (`generation-<ms>-<hex>`): once the clock had
 * stepped back (NTP, a VM resumed, a hand-set date), the generation before the published one
 * looked newer and was deleted under the process serving it, whose next request to an unloaded
 * shard failed as a damaged cache. The numbers in the names now only grow, whatever the clock.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter } from '../../src/compiler/build.js'
import { writeCache } from '../../src/compiler/write-cache.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { cleanupTempDirs, noop, tempDir } from '../support/compile.js'

afterAll(cleanupTempDirs)

/** A build of `register` as made at `ms` after the epoch (the clock as it then was). */
function buildAt(register: (r: Registrar) => void, ms: number) {
  return buildRouter(collectRoutes(register).routes, { now: new Date(ms) })
}

const v1 = (r: Registrar): void => {
  r.get('/users/{id:int}', noop, 'users.show')
  r.get('/posts/{slug}', noop, 'posts.show')
}
const v2 = (r: Registrar): void => {
  v1(r)
  r.get('/about', noop, 'about')
}

interface Router {
  match(method: string, path: string): unknown
}

describe('a clock stepped back between two builds', () => {
  it('leaves the generation published before in place for the process that runs on it', async () => {
    const cache = join(tempDir(), 'cache')
    const now = Date.UTC(2026, 0, 1)
    const hourAhead = now + 3_600_000
    // Built while the clock was an hour ahead; a process serves it, no shard loaded yet.
    const first = await writeCache(cache, buildAt(v1, hourAhead))
    const running = (await import(
      pathToFileURL(join(cache, first.manifest.generation, 'index.mjs')).href
    )) as Router
    // The clock is put right; the routes change, then a build finds them up to date.
    const second = await writeCache(cache, buildAt(v2, now))
    const again = await writeCache(cache, buildAt(v2, now + 1000))
    expect(again.written).toBe(false)
    expect(again.manifest.generation).toBe(second.manifest.generation)

    expect(running.match('GET', '/posts/hello')).toMatchObject({
      route: { name: 'posts.show' },
      params: { slug: 'hello' },
    })
    expect(readdirSync(cache)).toContain(first.manifest.generation)
    // Names sort in the order the builds published, so later builds keep telling them apart.
    const generations = readdirSync(cache).filter((name) => name.startsWith('generation-'))
    const sequence = (name: string): number => Number(name.split('-')[1])
    expect(generations.sort((a, b) => sequence(a) - sequence(b))).toEqual([
      first.manifest.generation,
      second.manifest.generation,
    ])
  })
})
