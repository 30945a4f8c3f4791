/**
 * Where loading a routes file puts the temporary bundle it imports (src/compiler/import-module.ts):
 * never into the user's source folder when it can be avoided, a failed write said as such, and
 * no file left behind by a SIGINT/SIGTERM during a slow load.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempFolders, writeTemporary } from '../../src/compiler/temp-bundle.js'
import { FwError } from '../../src/shared/errors.js'
import {
  assertBuilt,
  cleanupProjects,
  FW_BIN,
  lines,
  list,
  makeProject,
  runFw,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

/**
 * A routes file that, while it is being loaded, looks for fw's temporary bundle in its own folder
 * (the working directory here) and names its route after what it saw.
 */
const SPYING_ROUTES = `import { readdirSync } from 'node:fs'
const seen = readdirSync('.').filter((name) => name.includes('.fw-'))
export default (r) => {
  r.get('/', () => 'home', seen.length === 0 ? 'clean' : 'leaked: ' + seen.join(','))
}
`

/** A tiny installed package, as `npm install` would leave it. */
const DEP_PACKAGE = {
  'node_modules/dep/package.json': `{ "name": "dep", "type": "module", "exports": "./index.js" }\n`,
  'node_modules/dep/index.js': `export default () => 'dep.ok'\n`,
}

async function routeNames(dir: string, routes = 'routes.ts'): Promise<string[]> {
  const result = await runFw(['routes:list', '--routes', routes, '--json'], { cwd: dir })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  return (JSON.parse(result.stdout) as { name: string }[]).map((row) => row.name)
}

describe('the temporary bundle', () => {
  it('is not written into the source folder of a project with node_modules, and is removed after', async () => {
    const dir = makeProject({ 'routes.ts': SPYING_ROUTES, 'node_modules/.keep': '' })
    expect(await routeNames(dir)).toEqual(['clean'])
    expect(list(dir)).toEqual(['node_modules', 'routes.ts'])
    expect(list(join(dir, 'node_modules', '.cache', 'fw'))).toEqual([])
  })

  it('is not written into the source folder of a project without node_modules either', async () => {
    const dir = makeProject({ 'routes.ts': SPYING_ROUTES })
    expect(await routeNames(dir)).toEqual(['clean'])
    expect(list(dir)).toEqual(['routes.ts'])
  })

  it("still resolves the app's packages from a routes file in a subfolder", async () => {
    const dir = makeProject({
      ...DEP_PACKAGE,
      'app/routes.ts': `import dep from 'dep'\nexport default (r) => {\n  r.get('/', dep, dep())\n}\n`,
    })
    expect(await routeNames(dir, 'app/routes.ts')).toEqual(['dep.ok'])
    expect(list(join(dir, 'app'))).toEqual(['routes.ts'])
  })

  it('still resolves an import of the app by its own package name (written beside the file then)', async () => {
    const dir = makeProject({
      'package.json': `{ "name": "my-app", "type": "module", "exports": { "./lib": "./lib.mjs" } }\n`,
      'lib.mjs': `export const name = 'self'\n`,
      'node_modules/.keep': '',
      'routes.ts': `import { name } from 'my-app/lib'\nexport default (r) => {\n  r.get('/', () => name, name)\n}\n`,
    })
    expect(await routeNames(dir)).toEqual(['self'])
    expect(list(dir)).toEqual(['lib.mjs', 'node_modules', 'package.json', 'routes.ts'])
  })

  it('leaves paths made from import.meta.url pointing beside the routes file', async () => {
    const dir = makeProject({
      'node_modules/.keep': '',
      'app/data.txt': 'from.data\n',
      'app/routes.ts': `import { readFileSync } from 'node:fs'\nconst name = readFileSync(new URL('./data.txt', import.meta.url), 'utf8').trim()\nexport default (r) => {\n  r.get('/', () => 'x', name)\n}\n`,
    })
    expect(await routeNames(dir, 'app/routes.ts')).toEqual(['from.data'])
  })

  it('goes to the nearest node_modules/.cache/fw, else the temp folder; beside the file only for a self-reference or as a fallback', () => {
    const dir = makeProject({
      ...DEP_PACKAGE,
      'package.json': `{ "name": "my-app" }\n`,
      'app/routes.ts': '',
    })
    const file = join(dir, 'app', 'routes.ts')
    expect(tempFolders(file, ['dep', 'node:fs'])).toEqual([
      join(dir, 'node_modules', '.cache', 'fw'),
      join(dir, 'app'),
    ])
    expect(tempFolders(file, ['my-app/lib'])).toEqual([join(dir, 'app')])
    const bare = makeProject({ 'routes.ts': '' })
    expect(tempFolders(join(bare, 'routes.ts'), [])[0]).not.toContain(bare)
  })
})

describe('a temporary bundle that cannot be written', () => {
  it('is FW_TEMP_WRITE naming each folder and its errno, not an error of the routes file', async () => {
    const dir = makeProject({ taken: 'a file', 'routes.ts': '' })
    const error = await writeTemporary(
      [join(dir, 'taken', 'cache'), join(dir, 'taken')],
      '.x.mjs',
      'export {}',
      join(dir, 'routes.ts'),
    ).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(FwError)
    expect(error).toMatchObject({ code: 'FW_TEMP_WRITE' })
    const { message, hint } = error as FwError
    expect(message).toMatch(
      /^Cannot write the temporary bundle of .*routes\.ts to ".*taken\/cache": a file is in the way of the folder \(ENOTDIR\); nor to ".*taken": .*\((ENOTDIR|EEXIST)\)$/,
    )
    expect(hint).toMatch(/create and write .*taken\/cache\.$/)
  })

  it('falls back to the next folder', async () => {
    const dir = makeProject({ taken: 'a file', 'ok/.keep': '' })
    const path = await writeTemporary(
      [join(dir, 'taken', 'cache'), join(dir, 'ok')],
      '.y.mjs',
      'export {}',
      join(dir, 'routes.ts'),
    )
    expect(path).toBe(join(dir, 'ok', '.y.mjs'))
  })
})

// Tests run as root, which may write anywhere: these run the binary as `nobody` where that works.
const asNobody = (
  args: string[],
  cwd: string,
): { code: number | null; stderr: string; stdout: string } => {
  const run = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, FW_BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', FORCE_COLOR: '0' },
    encoding: 'utf8',
    timeout: 30_000,
  })
  return {
    code: run.status,
    stdout: stripVTControlCharacters(run.stdout ?? ''),
    stderr: stripVTControlCharacters(run.stderr ?? ''),
  }
}
const canRunAsNobody = ((): boolean => {
  if (process.getuid?.() !== 0) return false
  const probe = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', ''], {
    timeout: 10_000,
  })
  return probe.status === 0
})()

/** A project that nobody may read but not write (root made it; mkdtemp made its folder 0700). */
function readOnlyProject(files: Record<string, string>): string {
  const dir = makeProject(files)
  chmodSync(dir, 0o755)
  return dir
}

describe.skipIf(!canRunAsNobody)('a routes file in a read-only folder (run as nobody)', () => {
  it('loads: nothing needs writing beside it', () => {
    const dir = readOnlyProject({
      'routes.ts': `export default (r) => {\n  r.get('/', () => 'home')\n}\n`,
    })
    const result = asNobody(['routes:list', '--routes', 'routes.ts'], dir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^1 route/m)
  })

  it('is one FW_TEMP_WRITE line when no folder can take the bundle, not "the routes file threw"', () => {
    const dir = readOnlyProject({
      ...DEP_PACKAGE,
      'routes.ts': `import dep from 'dep'\nexport default (r) => {\n  r.get('/', dep)\n}\n`,
    })
    const result = asNobody(['routes:list', '--routes', 'routes.ts'], dir)
    expect(result.code).toBe(1)
    const [error, hint, ...rest] = lines(result.stderr)
    expect(rest).toEqual([])
    expect(error).toMatch(
      /^error Cannot write the temporary bundle of routes\.ts to "node_modules\/\.cache\/fw": permission denied \(EACCES\); nor to "\.": permission denied \(EACCES\) \[FW_TEMP_WRITE\]$/,
    )
    expect(hint).toMatch(/^ {2}hint: .*node_modules\/\.cache\/fw/)
    expect(result.stderr).not.toMatch(/threw/)
  })
})

describe('a signal during a slow load', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s removes the temporary bundle and still ends the process by the signal',
    async (signal) => {
      const dir = makeProject({
        'node_modules/.keep': '',
        'routes.ts': `console.error('loading')\nawait new Promise((done) => setTimeout(done, 20_000))\nexport default (r) => {\n  r.get('/', () => 'home')\n}\n`,
      })
      const child = spawn(process.execPath, [FW_BIN, 'routes:list', '--routes', 'routes.ts'], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1' },
      })
      let stderr = ''
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.on('exit', (code, sig) => done({ code, signal: sig })),
      )
      await new Promise<void>((loading, failed) => {
        const timer = setTimeout(
          () => failed(new Error(`never started loading: ${stderr}`)),
          20_000,
        )
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk
          if (stderr.includes('loading')) {
            clearTimeout(timer)
            loading()
          }
        })
      })
      const during = [...list(dir), ...list(join(dir, 'node_modules', '.cache', 'fw'))]
      expect(during.filter((name) => name.includes('.fw-'))).toHaveLength(1)
      child.kill(signal)
      expect(await ended).toEqual({ code: null, signal })
      expect(list(dir)).toEqual(['node_modules', 'routes.ts'])
      expect(list(join(dir, 'node_modules', '.cache', 'fw'))).toEqual([])
    },
  )
})
