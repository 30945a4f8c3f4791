/**
 * The production path: `fw init` scaffolds an app, `fw route:cache build` compiles it, and
 * `node server.mjs` serves it from the cache with the runtime only — a module-resolution hook
 * records every module the server loads, and none is the compiler, bundler or CLI.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'

const HOOKS = `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  appendFileSync(process.env.FW_LOADS, result.url + '\\n')
  return result
}
`
const RECORD = `import { register } from 'node:module'
register('./hooks.mjs', import.meta.url)
`

describe('fw init, fw route:cache build, node server.mjs', () => {
  let dir: string
  let url: string
  let stop: () => Promise<void>

  beforeAll(async () => {
    assertBuilt()
    dir = join(makeProject(), 'app')
    expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS)
    writeFileSync(join(dir, 'record.mjs'), RECORD)
    // Started from the app's parent folder, as a process manager may: the server finds its cache
    // beside server.mjs, not in the working directory.
    const record = pathToFileURL(join(dir, 'record.mjs')).href
    const child = spawn(process.execPath, ['--import', record, join(dir, 'server.mjs')], {
      cwd: dirname(dir),
      env: { ...process.env, PORT: '0', FW_LOADS: join(dir, 'loads.txt'), LOG_LEVEL: 'silent' },
    })
    // Waited for: the server writes into the app's folder as it stops (the hook records the
    // modules it loads to close its connections), and the folder is removed next.
    const exited = new Promise<void>((done) => child.once('exit', () => done()))
    stop = async () => {
      child.kill('SIGTERM')
      await exited
    }
    url = await new Promise((resolve, reject) => {
      let text = ''
      const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 20_000)
      const onData = (chunk: Buffer): void => {
        text += chunk.toString()
        const found = /listening on (http:\/\/\S+)/.exec(text)
        if (found) {
          clearTimeout(timer)
          resolve(found[1]!)
        }
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
    })
  })

  afterAll(async () => {
    await stop?.()
    cleanupProjects()
  })

  it('scaffolds routes.ts, server.mjs, package.json and .gitignore', () => {
    for (const file of ['routes.ts', 'server.mjs', 'package.json', '.gitignore'])
      expect(existsSync(join(dir, file))).toBe(true)
  })

  it("points the app's fw dependency at this copy of fw", () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    expect(manifest.dependencies.fw).toBe(`file:${REPO_ROOT.replace(/\/$/, '')}`)
  })

  it('refuses to scaffold over existing files', async () => {
    const again = await runFw(['init', dir], { cwd: REPO_ROOT })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/already has .*routes\.ts.*FW_INIT_EXISTS/)
  })

  it('serves the scaffolded routes from the compiled cache', async () => {
    expect(await (await fetch(`${url}/`)).json()).toEqual({ hello: 'world' })
    expect(await (await fetch(`${url}/api/v1/users/1`)).json()).toEqual({ id: 1, name: 'Ada' })
    const missing = await fetch(`${url}/api/v1/users/2`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: 'No such user' })
  })

  it('loads no compiler, bundler or CLI library', () => {
    const loaded = readFileSync(join(dir, 'loads.txt'), 'utf8').split('\n').filter(Boolean)
    expect(loaded.some((u) => u.includes('/dist/runtime/kernel.js'))).toBe(true)
    const forbidden = loaded.filter((u) =>
      /esbuild|ts-morph|typescript|commander|chokidar|picocolors|\/dist\/(compiler|cli|serve)\//.test(
        u,
      ),
    )
    expect(forbidden).toEqual([])
  })
})
