/**
 * `fw serve --watch` started on a routes file that does not build yet: it says why, waits, and
 * starts serving with the first change that builds (as `tsc --watch` or nodemon do), instead of
 * exiting before the developer could fix it. Without --watch, and for errors no edit of the routes
 * fixes (a --routes naming no file), it still exits 1.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, FW_BIN, makeProject, runFw } from '../support/project.js'

afterAll(cleanupProjects)

const GOOD = "export default (r) => { r.get('/a', () => ({ a: 1 }), 'a') }\n"
const DUPLICATE_NAME =
  "export default (r) => { r.get('/a', () => ({ a: 1 }), 'a'); r.get('/b', () => 2, 'a') }\n"
const NOT_YET = /not serving yet: waiting for a change that builds/g
const BANNER = /fw serve → (http:\/\/\S+)/

/** `fw serve --watch` in `dir`, its output gathered, with a way to wait for a line and to stop it. */
function serveWatching(dir: string, extra: string[] = []) {
  const child = spawn(
    process.execPath,
    [FW_BIN, 'serve', '--port', '0', '--routes', 'routes.mjs', '--watch', ...extra],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', LOG_LEVEL: 'silent' },
    },
  )
  let text = ''
  const gather = (chunk: Buffer): void => void (text += stripVTControlCharacters(chunk.toString()))
  child.stdout.on('data', gather)
  child.stderr.on('data', gather)
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  const waitFor = async (pattern: RegExp, count = 1): Promise<void> => {
    const until = Date.now() + 30_000
    while ((text.match(new RegExp(pattern.source, 'g')) ?? []).length < count) {
      if (child.exitCode !== null)
        throw new Error(`fw serve exited with ${child.exitCode}:\n${text}`)
      if (Date.now() > until) throw new Error(`timed out waiting for ${pattern}:\n${text}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = (): Promise<number | null> => {
    if (child.exitCode === null) child.kill('SIGTERM')
    return exited
  }
  return { output: () => text, waitFor, stop, exited }
}

describe('fw serve --watch on routes that do not build yet', () => {
  it('prints the error, waits, and serves once a change builds', async () => {
    assertBuilt()
    const dir = makeProject({ 'routes.mjs': DUPLICATE_NAME })
    const app = serveWatching(dir)
    try {
      await app.waitFor(NOT_YET)
      expect(app.output()).toMatch(
        /^error routes\.mjs:1:\d+: Route name "a" is used twice.*\[FW_NAME_DUPLICATE\]$/m,
      )
      expect(app.output()).not.toMatch(BANNER)
      // Still broken, another way: said again, still waiting.
      writeFileSync(
        join(dir, 'routes.mjs'),
        "export default (r) => { r.get('/a/{id', () => 1, 'a') }\n",
      )
      await app.waitFor(NOT_YET, 2)
      expect(app.output()).toMatch(/\[FW_PATTERN_INVALID\]/)
      writeFileSync(join(dir, 'routes.mjs'), GOOD)
      await app.waitFor(BANNER)
      const url = BANNER.exec(app.output())![1]!
      expect(await (await fetch(`${url}/a`)).json()).toEqual({ a: 1 })
      // From here it is the usual watch: a later change is reloaded.
      writeFileSync(join(dir, 'routes.mjs'), GOOD.replace('a: 1', 'a: 2'))
      await app.waitFor(/reloaded 1 route/)
      expect(await (await fetch(`${url}/a`)).json()).toEqual({ a: 2 })
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('does the same with --workers: the primary waits, then starts the workers', async () => {
    const dir = makeProject({ 'routes.mjs': DUPLICATE_NAME })
    const app = serveWatching(dir, ['--workers', '2'])
    try {
      await app.waitFor(NOT_YET)
      writeFileSync(join(dir, 'routes.mjs'), GOOD)
      await app.waitFor(BANNER)
      expect(app.output()).toMatch(/\(1 route, development, 2 workers, watching\)/)
      const url = BANNER.exec(app.output())![1]!
      expect(await (await fetch(`${url}/a`)).json()).toEqual({ a: 1 })
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('stops on SIGTERM while waiting, exit code 0, as a stop with nothing to drain', async () => {
    const dir = makeProject({ 'routes.mjs': DUPLICATE_NAME })
    const app = serveWatching(dir)
    await app.waitFor(NOT_YET)
    expect(await app.stop(), app.output()).toBe(0)
  }, 60_000)

  it('still exits 1 for a --routes that names no file, and without --watch', async () => {
    const dir = makeProject({ 'routes.mjs': DUPLICATE_NAME })
    const missing = await runFw(['serve', '--port', '0', '--routes', 'nope.mjs', '--watch'], {
      cwd: dir,
    })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/\[FW_ROUTES_NOT_FOUND\]/)
    expect(missing.stderr).not.toMatch(NOT_YET)
    const once = await runFw(['serve', '--port', '0', '--routes', 'routes.mjs'], { cwd: dir })
    expect(once.code).toBe(1)
    expect(once.stderr).toMatch(/\[FW_NAME_DUPLICATE\]/)
    expect(once.stderr).not.toMatch(NOT_YET)
  }, 60_000)
})

describe('an edit saved while fw serve --watch starts', () => {
  it('is reloaded by the watcher’s first build, which otherwise reloads nothing', async () => {
    const { buildCache } = await import('../../src/compiler/index.js')
    const { watchAndReload } = await import('../../src/serve/watch-and-reload.js')
    const dir = makeProject({ 'routes.mjs': GOOD })
    const said: string[] = []
    const reloads: unknown[] = []
    const options = {
      routes: join(dir, 'routes.mjs'),
      cache: join(dir, '.fw/cache'),
      say: (line: string) => said.push(line),
      warn: (line: string) => said.push(line),
      onError: (error: unknown) => said.push(String(error)),
    } as unknown as import('../../src/serve/serve.js').ServeOptions
    const serving = await buildCache({ routesFile: options.routes, cacheDir: options.cache })
    const reload = async (register: unknown) => void reloads.push(register)
    // Nothing changed since the server's build: the watcher's first build reloads nothing.
    const quiet = watchAndReload(options, reload, serving.manifest)
    await quiet.ready
    await quiet.close()
    expect([reloads.length, said]).toEqual([0, []])
    // Saved after the server's build, before the watcher watched: reloaded.
    writeFileSync(options.routes, GOOD.replace('a: 1', 'a: 2'))
    const watcher = watchAndReload(options, reload, serving.manifest)
    try {
      await watcher.ready
    } finally {
      await watcher.close()
      await (await import('../../src/compiler/import-module.js')).stopBundler()
    }
    expect(reloads).toHaveLength(1)
    expect(said).toEqual(['reloaded 1 route (while starting)'])
  }, 30_000)
})
