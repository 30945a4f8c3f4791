/**
 * Regression: closing the route watcher while a rebuild runs. The rebuild, finishing after the
 * close, started watching the folders its new imports live in (chokidar's add() reopens a closed
 * watcher): a file-system watch handle was left open that nothing would close, keeping the process
 * alive after `fw serve --watch` was stopped.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupProjects, makeProject } from '../support/project.js'
import { fsWatches, loggedWatch } from './watch-support.js'

afterAll(async () => {
  await (await import('../../src/compiler/import-module.js')).stopBundler()
  cleanupProjects()
})

describe('watchRoutes close()', () => {
  it('leaves nothing watched when a rebuild that adds a folder finishes after it', async () => {
    const dir = makeProject({
      'app/routes.mjs': "export default (r) => { r.get('/a', () => ({}), 'a') }\n",
      'lib/m.mjs': 'export const m = 1\n',
    })
    const routes = join(dir, 'app', 'routes.mjs')
    const loading = join(dir, 'loading')
    const before = fsWatches()
    const { watcher, builds } = loggedWatch(dir, routes)
    await watcher.ready
    expect(builds).toEqual(['built'])
    // The new version imports a module of another folder and, while the build loads it, says so
    // and takes its time: close() comes in the middle of that build.
    writeFileSync(
      routes,
      `import { writeFileSync } from 'node:fs'
import { m } from '../lib/m.mjs'
writeFileSync(${JSON.stringify(loading)}, 'x')
await new Promise((resolve) => setTimeout(resolve, 400))
export default (r) => { r.get('/a', () => ({ m }), 'a') }
`,
    )
    for (let waited = 0; !existsSync(loading); waited += 20) {
      if (waited > 10_000) throw new Error('the rebuild did not start')
      await sleep(20)
    }
    await watcher.close()
    expect(builds).toEqual(['built', 'built'])
    await sleep(50)
    expect(fsWatches()).toBe(before)
  }, 30_000)
})
