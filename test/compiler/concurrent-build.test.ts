/**
 * Builds that run at once into one cache folder (the real binary, as child processes): they take
 * turns through the cache's build lock, so the cache left behind always loads and its manifest and
 * router.mjs name the same generation. Before the lock, one build's cleanup deleted the generation
 * another had just published (import of router.mjs: ERR_MODULE_NOT_FOUND).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  list,
  makeProject,
  runFw,
  runScript,
} from '../support/project.js'
import { acquireLock } from '../../src/compiler/cache-lock.js'

const routes = (...paths: string[]): string =>
  `export default (r) => {\n${paths.map((p) => `  r.get('${p}', () => 'ok', '${p}')`).join('\n')}\n}\n`

const build = (dir: string, file: string) =>
  runFw(['route:cache', 'build', '--routes', file, '--cache', 'cache'], { cwd: dir })

/** The generation manifest.json names and the one router.mjs re-exports. */
function published(cache: string): { manifest: string; entry: string | undefined } {
  const manifest = JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8')).generation
  const entry = /\.\/(generation-[^/]+)\/index\.mjs/.exec(
    readFileSync(join(cache, 'router.mjs'), 'utf8'),
  )?.[1]
  return { manifest, entry }
}

/** Imports the cache's router.mjs in a fresh node and matches `path`; prints the route's name. */
async function matchInCache(cache: string, path: string): Promise<string> {
  const url = new URL(`file://${join(cache, 'router.mjs')}`).href
  const script = `const r = await import(${JSON.stringify(url)})
if (r.load) await r.load()
const m = r.match('GET', ${JSON.stringify(path)})
console.log(m.route ? m.route.name : 'status ' + m.status)`
  const result = await runScript(script, { cwd: cache })
  expect(result.stderr).toBe('')
  return result.stdout.trim()
}

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('route:cache build run several times at once', () => {
  it('leaves a cache that loads, with manifest.json and router.mjs naming the same generation', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const dir = makeProject({
        'a.mjs': routes('/a'),
        'b.mjs': routes('/b', '/b/{id:int}'),
        'c.mjs': routes('/c'),
      })
      const cache = join(dir, 'cache')
      expect((await build(dir, 'a.mjs')).code).toBe(0)
      const runs = await Promise.all(['b.mjs', 'c.mjs', 'b.mjs', 'c.mjs'].map((f) => build(dir, f)))
      for (const run of runs) expect(run.stderr).toBe('')
      const { manifest, entry } = published(cache)
      expect(entry).toBe(manifest)
      expect(existsSync(join(cache, manifest, 'index.mjs'))).toBe(true)
      // One of the two route tables won; either way its routes match and the other's do not.
      const names = [await matchInCache(cache, '/b'), await matchInCache(cache, '/c')]
      expect(names.filter((name) => name.startsWith('/')).length).toBe(1)
      expect(names).toContain('status 404')
      expect(list(cache).filter((n) => n.startsWith('.'))).toEqual([])
      expect(list(cache).filter((n) => n.startsWith('generation-')).length).toBeLessThanOrEqual(2)
    }
  }, 120_000)

  it('keeps the previous generation for running processes when the same routes are built at once', async () => {
    const dir = makeProject({ 'a.mjs': routes('/a'), 'b.mjs': routes('/b') })
    const cache = join(dir, 'cache')
    expect((await build(dir, 'a.mjs')).code).toBe(0)
    const first = published(cache).manifest
    const runs = await Promise.all([1, 2, 3, 4].map(() => build(dir, 'b.mjs')))
    for (const run of runs) expect(run.code).toBe(0)
    const { manifest, entry } = published(cache)
    expect(entry).toBe(manifest)
    expect(list(cache).filter((n) => n.startsWith('generation-'))).toEqual([first, manifest].sort())
    expect(await matchInCache(cache, '/b')).toBe('/b')
  }, 60_000)
})

describe('the cache build lock', () => {
  it('is taken over when the build that holds it has died', async () => {
    const dir = makeProject({ 'a.mjs': routes('/a') })
    const cache = join(dir, 'cache')
    expect((await build(dir, 'a.mjs')).code).toBe(0)
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
    const pid = Number(dead.stdout.toString())
    const lock = join(cache, '.build.lock')
    writeFileSync(lock, JSON.stringify({ pid, host: hostname() }))
    writeFileSync(join(dir, 'a.mjs'), routes('/a', '/a2'))
    // Kept fresh, as a live holder's heartbeat keeps it: the lock never turns stale, so the build
    // gets it only by seeing its holder is dead (else it waits 60 s and fails, past this timeout).
    const heartbeat = setInterval(() => {
      const now = new Date()
      try {
        utimesSync(lock, now, now)
      } catch {
        // taken over (renamed, then removed) meanwhile
      }
    }, 500)
    const run = await build(dir, 'a.mjs').finally(() => clearInterval(heartbeat))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(existsSync(join(cache, '.build.lock'))).toBe(false)
    expect(await matchInCache(cache, '/a2')).toBe('/a2')
  }, 30_000)

  it('makes a build wait while a live process holds it', async () => {
    const dir = makeProject({ 'a.mjs': routes('/a') })
    const cache = join(dir, 'cache')
    expect((await build(dir, 'a.mjs')).code).toBe(0)
    const before = published(cache).manifest
    const lock = join(cache, '.build.lock')
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname() }))
    writeFileSync(join(dir, 'a.mjs'), routes('/a', '/a2'))
    const running = build(dir, 'a.mjs')
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect(published(cache).manifest).toBe(before)
    rmSync(lock)
    const run = await running
    expect(run.stderr).toBe('')
    expect(published(cache).manifest).not.toBe(before)
    expect(await matchInCache(cache, '/a2')).toBe('/a2')
  }, 30_000)

  // The holder used to be known by the lock file's inode, which ext4 hands to the next file
  // created: a build whose stale lock had been taken over deleted the new holder's lock.
  it("is released only by its holder, even when the next lock reuses the old one's inode", async () => {
    const root = makeProject({})
    const release = await acquireLock(root)
    const lock = join(root, '.build.lock')
    rmSync(lock)
    const next = JSON.stringify({ pid: process.pid, host: hostname(), token: 'another-build' })
    writeFileSync(lock, next)
    await release()
    expect(readFileSync(lock, 'utf8')).toBe(next)
  })
})
