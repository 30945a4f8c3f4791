/**
 * Soak of `fw serve --watch`: the route watcher kept a file-system watch open for each temporary
 * file an editor's atomic save (or `sed -i`) wrote beside the routes file and renamed over it.
 * chokidar watches every file of a watched folder, and one that is gone while it waits for the
 * write to finish (awaitWriteFinish) is dropped without closing its watch: 130 saves left 26
 * watch handles open in a running server, one more every few saves, for as long as it ran.
 */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupProjects, makeProject } from '../support/project.js'
import { fsWatches, loggedWatch } from './watch-support.js'

afterAll(async () => {
  await (await import('../../src/compiler/import-module.js')).stopBundler()
  cleanupProjects()
})

const routesVersion = (n: number): string =>
  `export default (r) => { r.get('/a', () => ({ n: ${n} }), 'a') }\n`

async function until(done: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 15_000) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

describe('watchRoutes and temporary files beside the routes file', () => {
  it('keeps no watch open for atomic saves and scratch files once they are gone', async () => {
    const dir = makeProject({ 'routes.mjs': routesVersion(0) })
    const routes = join(dir, 'routes.mjs')
    const { watcher, builds } = loggedWatch(dir, routes)
    try {
      await watcher.ready
      const before = fsWatches()
      for (let save = 1; save <= 8; save++) {
        // An atomic save, as `sed -i` does it: a new file beside the old, renamed over it.
        const temp = join(dir, `sed${save}XyZ`)
        writeFileSync(temp, routesVersion(save))
        await sleep(15)
        renameSync(temp, routes)
        await until(() => builds.length === save + 1, `rebuild ${save}`)
        // An editor's scratch file, written and removed within a moment.
        const scratch = join(dir, `4913-${save}`)
        writeFileSync(scratch, '')
        await sleep(15)
        unlinkSync(scratch)
      }
      // Whatever chokidar still had to settle about the last files.
      await sleep(300)
      expect(builds.every((b) => b === 'built')).toBe(true)
      expect(fsWatches()).toBe(before)
    } finally {
      await watcher.close()
    }
  }, 60_000)
})
