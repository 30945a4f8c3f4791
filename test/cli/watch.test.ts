/**
 * `fw route:cache build --watch`: rebuilds when the routes file or a module it imports changes,
 * keeps the last good cache when a rebuild fails, and recovers when the error is fixed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, FW_BIN, makeProject } from '../support/project.js'

const routes = (extra: string): string => `import { names } from './names.ts'
const h = () => null
export default (r: any) => {
  r.get('/', h, names.home)
  ${extra}
}
`

/** Collects the child's output; `waitFor` resolves once `pattern` appears one more time than now. */
function outputOf(child: ChildProcess): {
  text: () => string
  waitFor: (pattern: RegExp) => Promise<void>
} {
  let text = ''
  const waiters: (() => void)[] = []
  const onData = (chunk: Buffer): void => {
    text += stripVTControlCharacters(chunk.toString())
    for (const check of waiters.splice(0)) check()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  return {
    text: () => text,
    waitFor: (pattern) =>
      new Promise((done, fail) => {
        const count = (text.match(new RegExp(pattern, 'g')) ?? []).length + 1
        const timer = setTimeout(
          () => fail(new Error(`timed out waiting for ${pattern}; output:\n${text}`)),
          20_000,
        )
        const check = (): void => {
          if ((text.match(new RegExp(pattern, 'g')) ?? []).length >= count) {
            clearTimeout(timer)
            done()
          } else waiters.push(check)
        }
        check()
      }),
  }
}

describe('fw route:cache build --watch', () => {
  let dir: string
  let child: ChildProcess
  let output: ReturnType<typeof outputOf>
  const manifest = (): { routeCount: number; generation: string } =>
    JSON.parse(readFileSync(join(dir, '.fw/cache/manifest.json'), 'utf8'))

  beforeAll(async () => {
    assertBuilt()
    dir = makeProject({
      'routes.ts': routes(''),
      'names.ts': "export const names = { home: 'home' }\n",
    })
    child = spawn(process.execPath, [FW_BIN, 'route:cache', 'build', '--watch'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    })
    output = outputOf(child)
    await output.waitFor(/watching routes\.ts/)
  })

  afterAll(() => {
    child?.kill('SIGTERM')
    cleanupProjects()
  })

  it('builds once at start', () => {
    expect(output.text()).toMatch(/✔ built 1 route,/)
    expect(manifest().routeCount).toBe(1)
  })

  it('rebuilds when the routes file changes, naming the file', async () => {
    const rebuilt = output.waitFor(/✔ built 2 routes.*changed: routes\.ts/)
    writeFileSync(join(dir, 'routes.ts'), routes("r.get('/about', h, 'about')"))
    await rebuilt
    expect(manifest().routeCount).toBe(2)
  })

  it('rebuilds when an imported module changes', async () => {
    const rebuilt = output.waitFor(/changed: names\.ts/)
    writeFileSync(join(dir, 'names.ts'), "export const names = { home: 'start' }\n")
    await rebuilt
    const { ROUTES } = await import(join(dir, '.fw/cache', manifest().generation, '__routes.mjs'))
    expect(ROUTES[0].name).toBe('start')
  })

  it('keeps the last good cache when a rebuild fails, then recovers', async () => {
    const before = manifest().generation
    const failed = output.waitFor(/keeping the last good cache/)
    writeFileSync(join(dir, 'routes.ts'), routes("r.get('/about', h, 'about'); r.get('/about', h)"))
    await failed
    expect(output.text()).toMatch(/error routes\.ts:\d+:\d+: GET \/about is registered twice/)
    expect(manifest().generation).toBe(before)
    const recovered = output.waitFor(/✔ built 2 routes/)
    writeFileSync(join(dir, 'routes.ts'), routes("r.get('/contact', h, 'contact')"))
    await recovered
    expect(manifest().generation).not.toBe(before)
    expect(child.exitCode).toBeNull()
  })
})

describe('fw route:cache build --watch whose first build fails', () => {
  it('says no cache was built yet (none to keep), then builds once the error is fixed', async () => {
    assertBuilt()
    const dir = makeProject({
      'routes.ts': routes("r.get('/a', h); r.get('/a', h)"),
      'names.ts': "export const names = { home: 'home' }\n",
    })
    const child = spawn(process.execPath, [FW_BIN, 'route:cache', 'build', '--watch'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    })
    try {
      const output = outputOf(child)
      await Promise.all([
        output.waitFor(/no cache built yet; waiting for changes/),
        output.waitFor(/watching routes\.ts/),
      ])
      expect(output.text()).not.toContain('keeping the last good cache')
      const built = output.waitFor(/✔ built 1 route/)
      writeFileSync(join(dir, 'routes.ts'), routes(''))
      await built
    } finally {
      child.kill('SIGTERM')
    }
  })
})
