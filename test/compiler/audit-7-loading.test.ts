/**
 * Loading a real app's routes file (src/compiler/import-module.ts) and watching what it imports
 * (src/serve/watch-routes.ts): app modules that find files relative to themselves or require() in
 * CommonJS, and imported files deleted and created again under --watch.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  FW_BIN,
  makeProject,
  runFw,
  runScript,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

/** An app whose modules, in a subfolder, read `data/greeting.txt` beside themselves at import. */
const APP = {
  'app/data/greeting.txt': 'hello\n',
  'app/esm.ts': `import { readFileSync } from 'node:fs'
import { join } from 'node:path'
export const byUrl = readFileSync(new URL('./data/greeting.txt', import.meta.url), 'utf8').trim()
export const byDirname = readFileSync(join(import.meta.dirname, 'data/greeting.txt'), 'utf8').trim()
`,
  'app/legacy.cts': `const fs = require('node:fs')
const path = require('node:path')
export = { greeting: fs.readFileSync(path.join(__dirname, 'data/greeting.txt'), 'utf8').trim() }
`,
  'app/old.cjs': `module.exports = { file: require('node:path').basename(__filename) }\n`,
  'routes.ts': `import { byUrl, byDirname } from './app/esm.js'
import legacy = require('./app/legacy.cjs')
import old from './app/old.cjs'
export default (r: any) => {
  r.get('/', () => 'home', [byUrl, byDirname, legacy.greeting, old.file].join(','))
}
`,
}

describe('an app module bundled into the routes', () => {
  it('finds files relative to itself (import.meta.url, import.meta.dirname, __dirname), and require() works in CommonJS', async () => {
    const dir = makeProject(APP)
    const list = await runFw(['routes:list', '--json'], { cwd: dir })
    expect(list.stderr).toBe('')
    expect(JSON.parse(list.stdout)[0].name).toBe('hello,hello,hello,old.cjs')
    // The same bundle, as the cache keeps it for production.
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    const production = await runScript(
      `const { default: register } = await import('./.fw/cache/routes.mjs')
register({ get: (path, handler, name) => console.log(name) })`,
      { cwd: dir },
    )
    expect(production.stderr).toBe('')
    expect(production.stdout.trim()).toBe('hello,hello,hello,old.cjs')
  })

  it('keeps the column of a compile error on the first line of a module that uses import.meta', async () => {
    const dir = makeProject({
      'routes.ts': `import { a } from './missing.js'; export const url = import.meta.url
export default (r: any) => { r.get('/', () => a) }
`,
    })
    const { code, stderr } = await runFw(['routes:list'], { cwd: dir })
    expect(code).toBe(1)
    expect(stderr).toMatch(/^error routes\.ts:1:19: Could not resolve "\.\/missing\.js"/)
  })
})

/** `fw route:cache build --watch` in `dir`; `seen(pattern)` waits for one more line matching it. */
function watchIn(dir: string): { child: ChildProcess; seen: (pattern: RegExp) => Promise<void> } {
  const child = spawn(process.execPath, [FW_BIN, 'route:cache', 'build', '--watch'], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  })
  let text = ''
  const waiters = new Set<() => void>()
  const onData = (chunk: Buffer): void => {
    text += stripVTControlCharacters(chunk.toString())
    for (const check of waiters) check()
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const seen = (pattern: RegExp): Promise<void> => {
    const count = (): number => text.match(new RegExp(pattern, 'g'))?.length ?? 0
    const wanted = count() + 1
    return new Promise((done, fail) => {
      const timer = setTimeout(() => {
        waiters.delete(check)
        fail(new Error(`no ${pattern} within 20 s; output:\n${text}`))
      }, 20_000)
      const check = (): void => {
        if (count() < wanted) return
        clearTimeout(timer)
        waiters.delete(check)
        done()
      }
      waiters.add(check)
    })
  }
  return { child, seen }
}

describe('fw route:cache build --watch, with the routes importing from a subfolder', () => {
  let dir: string
  let watcher: ReturnType<typeof watchIn>
  const write = (name: string, text: string): void => writeFileSync(join(dir, name), text)

  beforeAll(async () => {
    dir = makeProject({
      'routes.ts': `import { name } from './lib/name.js'
export default (r: any) => { r.get('/', () => name, name) }
`,
      'lib/name.ts': "export const name = 'one'\n",
    })
    watcher = watchIn(dir)
    await watcher.seen(/watching routes\.ts/)
  })

  afterAll(() => watcher?.child.kill('SIGTERM'))

  it('rebuilds when an imported file that was deleted comes back (git checkout, a safe write)', async () => {
    let next = watcher.seen(/keeping the last good cache/)
    renameSync(join(dir, 'lib/name.ts'), join(dir, 'name.ts.bak'))
    await next
    next = watcher.seen(/✔ up to date 1 route.*changed: lib\/name\.ts/)
    renameSync(join(dir, 'name.ts.bak'), join(dir, 'lib/name.ts'))
    await next
    // And goes on seeing its edits.
    next = watcher.seen(/✔ built 1 route.*changed: lib\/name\.ts/)
    write('lib/name.ts', "export const name = 'two'\n")
    await next
  })

  it('rebuilds when the file an import names is created after the import was written', async () => {
    let next = watcher.seen(/Could not resolve "\.\/lib\/extra\.js"/)
    write(
      'routes.ts',
      `import { name } from './lib/name.js'
import { extra } from './lib/extra.js'
export default (r: any) => { r.get('/', () => name, name + extra) }
`,
    )
    await next
    next = watcher.seen(/✔ built 1 route.*changed: lib\/extra\.ts/)
    write('lib/extra.ts', "export const extra = '!'\n")
    await next
  })
})

describe('fw route:cache build --watch, with the imports resolved through tsconfig paths', () => {
  it('rebuilds when tsconfig.json changes where an alias points', async () => {
    const dir = makeProject({
      'tsconfig.json': JSON.stringify({ compilerOptions: { paths: { '@lib/*': ['./one/*'] } } }),
      'routes.ts': `import { name } from '@lib/name'
export default (r: any) => { r.get('/', () => name, name) }
`,
      'one/name.ts': "export const name = 'one'\n",
      'two/name.ts': "export const name = 'two'\n",
    })
    const watcher = watchIn(dir)
    try {
      await watcher.seen(/watching routes\.ts/)
      const next = watcher.seen(/✔ built 1 route.*changed: tsconfig\.json/)
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { paths: { '@lib/*': ['./two/*'] } } }),
      )
      await next
      const list = await runFw(['routes:list', '--json'], { cwd: dir })
      expect(JSON.parse(list.stdout)[0].name).toBe('two')
    } finally {
      watcher.child.kill('SIGTERM')
    }
  })
})
