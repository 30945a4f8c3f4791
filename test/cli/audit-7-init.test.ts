/**
 * Audit 7 of `fw init`: run from a copy of fw that npm installed (from a tarball, as the README
 * says to add fw to an app), it pointed the new app at `file:<that app>/node_modules/fw`, which
 * breaks as soon as that app reinstalls or goes away; now the new app asks for fw where the first
 * app got it. And the scaffold, a TypeScript app, had no tsconfig.json and no typescript: `npx tsc`
 * fetched the unrelated "tsc" package; now `npm run typecheck` checks it strictly.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  REPO_ROOT,
  TSC,
  runFw,
  runNode,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

interface Manifest {
  version: string
  scripts: Record<string, string>
  dependencies: Record<string, string>
  devDependencies?: Record<string, string>
}

const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest

/**
 * A copy of the package as npm installs it in `<dir>/node_modules/fw` (the files "files" ships),
 * its dependencies reached through a link to this checkout's.
 */
function installCopy(dir: string): string {
  const copy = join(dir, 'node_modules', 'fw')
  for (const part of ['bin', 'dist', 'templates', 'package.json'])
    cpSync(join(REPO_ROOT, part), join(copy, part), {
      recursive: true,
      filter: (file) => !file.endsWith('.map'),
    })
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir')
  return join(copy, 'bin', 'fw.js')
}

/** `fw init app` beside an app whose package.json asks for fw as `deps` says, with fw installed. */
async function initFromInstalled(deps: Record<string, string>): Promise<[string, Manifest]> {
  const root = makeProject({
    'host/package.json': JSON.stringify({ name: 'host', private: true, dependencies: deps }),
  })
  const bin = installCopy(join(root, 'host'))
  const result = await runNode([bin, 'init', '../app'], { cwd: join(root, 'host') })
  expect(result.code, result.stderr).toBe(0)
  return [root, readManifest(join(root, 'app'))]
}

describe('fw init run from an installed copy of fw', () => {
  it('points the new app at the tarball the installing app got fw from, not into its node_modules', async () => {
    const [root, manifest] = await initFromInstalled({ fw: 'file:../fw-0.1.0.tgz' })
    expect(manifest.dependencies.fw).toBe(`file:${join(root, 'fw-0.1.0.tgz')}`)
  }, 30_000)

  it('asks for the version range the installing app asked the registry for', async () => {
    const [, manifest] = await initFromInstalled({ fw: '^0.1.0' })
    expect(manifest.dependencies.fw).toBe('^0.1.0')
  }, 30_000)

  it("asks for this copy's version when no app declares it (a global install)", async () => {
    const root = makeProject()
    const bin = installCopy(join(root, 'lib'))
    const result = await runNode([bin, 'init', 'app'], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(readManifest(join(root, 'app')).dependencies.fw).toBe(
      `^${readManifest(REPO_ROOT).version}`,
    )
  }, 30_000)

  it('still links a checkout it is run from', async () => {
    const dir = makeProject()
    expect((await runFw(['init', 'app'], { cwd: dir })).code).toBe(0)
    expect(readManifest(join(dir, 'app')).dependencies.fw).toBe(
      `file:${REPO_ROOT.replace(/\/$/, '')}`,
    )
  })
})

describe('the scaffold type-checks', () => {
  it('ships a strict tsconfig.json, typescript and a typecheck script', async () => {
    const dir = join(makeProject(), 'app')
    const result = await runFw(['init', dir], { cwd: REPO_ROOT })
    expect(result.code, result.stderr).toBe(0)
    expect(lines(result.stdout)[0]).toMatch(/tsconfig\.json/)
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>
    }
    expect(tsconfig.compilerOptions.strict).toBe(true)
    const manifest = readManifest(dir)
    expect(manifest.scripts.typecheck).toBe('tsc')
    expect(Object.keys(manifest.devDependencies ?? {}).sort()).toEqual([
      '@types/node',
      'typescript',
    ])
  })

  it('passes `tsc` with its tsconfig, fw and @types/node installed', async () => {
    const dir = join(makeProject(), 'app')
    expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    symlinkSync(join(REPO_ROOT, 'node_modules', '@types'), join(dir, 'node_modules', '@types'))
    const passes = await runNode([TSC], { cwd: dir })
    expect(passes.stdout + passes.stderr).toBe('')
    expect(passes.code).toBe(0)
    // And it does check routes.ts: an error there fails.
    writeFileSync(
      join(dir, 'routes.ts'),
      `${readFileSync(join(dir, 'routes.ts'), 'utf8')}\nexport const n: number = 'one'\n`,
    )
    const fails = await runNode([TSC], { cwd: dir })
    expect(fails.code).toBe(2)
    expect(fails.stdout).toMatch(/^routes\.ts\(\d+,\d+\): error TS2322/)
  }, 60_000)

  it("never overwrites the user's own tsconfig.json", async () => {
    const dir = makeProject({ 'tsconfig.json': '{ "mine": true }' })
    const result = await runFw(['init', '.'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe('error . already has tsconfig.json [FW_INIT_EXISTS]')
    expect(list(dir)).toEqual(['tsconfig.json'])
    expect(readFileSync(join(dir, 'tsconfig.json'), 'utf8')).toBe('{ "mine": true }')
  })
})
