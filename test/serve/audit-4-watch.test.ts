/**
 * `fw serve --watch` names the file that changed: a file name holding a line break or a terminal
 * escape (a cloned repository can carry one) is printed escaped, on the one "reloaded" line.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { watchAndReload } from '../../src/serve/watch-and-reload.js'
import type { ServeOptions } from '../../src/serve/serve.js'
import { cleanupProjects, makeProject } from '../support/project.js'

afterAll(cleanupProjects)

const IMPORTED = 'msg\u001b[2J\nX.mjs'

describe('fw serve --watch', () => {
  it('prints the name of a changed file with control characters escaped, on one line', async () => {
    const dir = makeProject({
      'routes.mjs': `import { m } from ${JSON.stringify('./' + IMPORTED)}
export default (r) => { r.get('/a', () => ({ m }), 'a') }
`,
      [IMPORTED]: 'export const m = 1\n',
    })
    const said: string[] = []
    const problems: unknown[] = []
    let reloaded!: () => void
    const done = new Promise<void>((resolve) => (reloaded = resolve))
    const options = {
      routes: join(dir, 'routes.mjs'),
      cache: join(dir, '.fw/cache'),
      say: (line: string) => (said.push(line), reloaded()),
      warn: (line: string) => problems.push(line),
      onError: (error: unknown) => problems.push(error),
    } as unknown as ServeOptions
    const { buildCache } = await import('../../src/compiler/index.js')
    const serving = await buildCache({ routesFile: options.routes, cacheDir: options.cache })
    const watcher = watchAndReload(options, async () => {}, serving.manifest)
    try {
      await watcher.ready
      writeFileSync(join(dir, IMPORTED), 'export const m = 2\n')
      await done
    } finally {
      await watcher.close()
      await (await import('../../src/compiler/import-module.js')).stopBundler()
    }
    expect(problems).toEqual([])
    expect(said).toEqual([`reloaded 1 route (changed: ${join(dir, 'msg\\x1b[2J\\nX.mjs')})`])
  }, 30_000)
})
