/**
 * Audit 5: `fw route:cache build` on an unchanged route table whose cache was damaged after the
 * build. The error loading the damaged file says to run this command, and `fw serve` runs it
 * before booting: it used to answer "up to date" (every file still existed) and leave the
 * damage, so the fix the error named fixed nothing.
 */
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.get('/users/{id:int}', () => 'user', 'users.show')
}
`
const BUILD = ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache']

/** For `node -e` in the project: what router.mjs answers (or the error it throws). */
const MATCH = `import('./cache/router.mjs').then(async (r) => { await r.load(); console.log(JSON.stringify(r.match('GET', '/users/3'))) }).catch((e) => console.log('ERROR ' + e.message))`

describe('fw route:cache build after a file of the cache was damaged', () => {
  const damage: Record<string, (cache: string, generation: string) => void> = {
    'a shard emptied': (_, generation) => writeFileSync(join(generation, 'users.mjs'), ''),
    'a shard edited to answer another id': (_, generation) => {
      const file = join(generation, 'users.mjs')
      writeFileSync(file, readFileSync(file, 'utf8').replace('"id": v2', '"id": 99'))
    },
    'router.mjs cut short': (cache) => {
      const file = join(cache, 'router.mjs')
      const text = readFileSync(file, 'utf8')
      writeFileSync(file, text.slice(0, text.indexOf('GENERATION = "') + 20))
    },
  }

  it.each(Object.keys(damage))(
    'writes the cache again instead of "up to date", and it loads: %s',
    async (name) => {
      const dir = makeProject({ 'routes.mjs': ROUTES })
      expect((await runFw(BUILD, { cwd: dir })).code).toBe(0)
      const cache = join(dir, 'cache')
      const { generation } = JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8')) as {
        generation: string
      }
      damage[name]!(cache, join(cache, generation))

      const rebuilt = await runFw(BUILD, { cwd: dir })
      expect(rebuilt.code, rebuilt.stderr).toBe(0)
      expect(rebuilt.stdout).not.toContain('up to date')
      const answer = await runNode(dir, MATCH)
      expect(JSON.parse(answer)).toMatchObject({ route: { name: 'users.show' }, params: { id: 3 } })
    },
  )
})

function runNode(cwd: string, code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', code], { cwd }, (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim()),
    )
  })
}
