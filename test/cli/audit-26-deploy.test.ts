/**
 * Audit 26 (deploying: the cache built in CI, shipped to another path, served read-only). A cache
 * built in one folder was not the one a build in another folder writes (the bundled routes.mjs
 * held the builder's absolute folder in its source map), so `fw serve` at the new path wrote a
 * new generation into the shipped app; an up-to-date cache in a folder the server may not write
 * failed the start (FW_CACHE_WRITE: the build lock), and so did the temporary bundle of routes.ts
 * when node_modules and the app folder are read-only (FW_TEMP_WRITE).
 */
import { spawn } from 'node:child_process'
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Manifest } from '../../src/shared/cache-format.js'
import {
  assertBuilt,
  cleanupProjects,
  FW_BIN,
  makeProject,
  REPO_ROOT,
  runFw,
  type RunResult,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)
// Read-only folders made for a test, given back their write bit so that cleanup can remove them.
const readOnly: string[] = []
afterEach(() => {
  for (const dir of readOnly.splice(0)) chmodRecursive(dir, true)
})

function chmodRecursive(dir: string, writable: boolean): void {
  const walk = (path: string): void => {
    const isDir = (() => {
      try {
        return readdirSync(path) !== null
      } catch {
        return false
      }
    })()
    chmodSync(path, isDir ? (writable ? 0o755 : 0o555) : writable ? 0o644 : 0o444)
    if (isDir) for (const entry of readdirSync(path)) walk(join(path, entry))
  }
  walk(dir)
}

/**
 * `dir` as a deployed app the server's user may not write, and a temp folder for the child that it
 * may write only when `tmpWritable` (else the routes file cannot be bundled anywhere).
 */
function deployReadOnly(dir: string, tmpWritable = false): { env: Record<string, string> } {
  const tmp = mkdtempSync(join(tmpdir(), 'fw-readonly-tmp-'))
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))
  chmodRecursive(dir, false)
  readOnly.push(dir)
  if (tmpWritable) chmodSync(tmp, 0o777)
  else {
    chmodRecursive(tmp, false)
    readOnly.push(tmp)
  }
  return { env: { TMPDIR: tmp } }
}

// Root ignores file modes: as root, the child runs as nobody (setpriv), a user the folders are
// not writable for; as anyone else, the folders' modes already keep the user out.
const AS_ROOT = process.getuid?.() === 0
const command = (args: readonly string[]): [string, string[]] =>
  AS_ROOT
    ? [
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, FW_BIN, ...args],
      ]
    : [process.execPath, [FW_BIN, ...args]]

/** Runs fw as the unprivileged user in `cwd`; `until` ends it early once stdout matches. */
function runUnprivileged(
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  until?: (stdout: string) => Promise<boolean>,
): Promise<RunResult> {
  const [file, argv] = command(args)
  const child = spawn(file, argv, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    timeout: 30_000,
  })
  let stdout = ''
  let stderr = ''
  let checking = false
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (until === undefined || checking) return
    checking = true
    void until(stdout).then((done) => {
      checking = false
      if (done) child.kill('SIGTERM')
    })
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.get('/users/{id:int}', () => 'user', 'users.show')
}
`
const manifestOf = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, '.fw/cache/manifest.json'), 'utf8')) as Manifest
const BUILD = ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', '.fw/cache']

/**
 * The ci folder, built by the CLI as a CI job builds it, and a copy of it at another path (the
 * shipped app). (The CLI, not buildCache here: a cache's hash covers the code that emitted it,
 * dist's there and src's in this process.)
 */
async function shipped(): Promise<{ ci: string; prod: string }> {
  const ci = makeProject({ 'routes.mjs': ROUTES })
  const built = await runFw(BUILD, { cwd: ci })
  expect(built.code, built.stderr).toBe(0)
  const prod = makeProject()
  cpSync(ci, prod, { recursive: true })
  return { ci, prod }
}

describe('a cache built in one folder and shipped to another', () => {
  it('is up to date there: the same files, no new generation', async () => {
    const { ci, prod } = await shipped()
    const again = await runFw(BUILD, { cwd: prod })
    expect(again.stdout).toContain('up to date')
    expect(manifestOf(prod).generation).toBe(manifestOf(ci).generation)
    // Built afresh in the other folder, the generation's files are the same bytes.
    const other = makeProject({ 'routes.mjs': ROUTES })
    expect((await runFw(BUILD, { cwd: other })).code).toBe(0)
    expect(manifestOf(other).contentHash).toBe(manifestOf(ci).contentHash)
  })

  it('holds no absolute path of the machine that built it in routes.mjs', async () => {
    const { ci } = await shipped()
    const code = readFileSync(
      join(ci, '.fw/cache', manifestOf(ci).generation, 'routes.mjs'),
      'utf8',
    )
    const map = /base64,([A-Za-z0-9+/=]+)\n?$/.exec(code)![1]!
    const { sourceRoot } = JSON.parse(Buffer.from(map, 'base64').toString()) as {
      sourceRoot: string
    }
    expect(sourceRoot).toBe('../../../')
    expect(code).not.toContain(ci)
  })
})

describe('an up-to-date cache the server may not write', () => {
  it('builds as "up to date" without the lock (FW_CACHE_WRITE before)', async () => {
    const { prod } = await shipped()
    const before = manifestOf(prod).generation
    const { env } = deployReadOnly(prod, true)
    const result = await runUnprivileged(BUILD, prod, env)
    expect(result.code, result.stderr).toBe(0)
    expect(manifestOf(prod).generation).toBe(before)
  })

  it('still refuses a cache it would have to rewrite', async () => {
    const { prod } = await shipped()
    writeFileSync(
      join(prod, 'routes.mjs'),
      ROUTES.replace("'home')", "'home')\n  r.get('/b', () => 'b')"),
    )
    const { env } = deployReadOnly(prod, true)
    const result = await runUnprivileged(BUILD, prod, env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('[FW_CACHE_WRITE]')
  })

  it('is served by fw serve, which cannot bundle routes.mjs there (FW_TEMP_WRITE before)', async () => {
    const { prod } = await shipped()
    const { env } = deployReadOnly(prod)
    let answer = ''
    const args = ['serve', '--routes', 'routes.mjs', '--cache', '.fw/cache', '--port', '0']
    const result = await runUnprivileged(args, prod, env, async (stdout) => {
      const url = /fw serve → (http:\/\/\S+)/.exec(stdout)?.[1]
      if (url === undefined) return false
      answer = await (await fetch(`${url}/`)).text()
      return true
    })
    expect(answer, result.stderr).toBe('home')
    expect(result.stderr).toMatch(/serving the up-to-date route cache/)
  })

  it('that is stale is an error there, not served', async () => {
    const { prod } = await shipped()
    writeFileSync(join(prod, 'routes.mjs'), ROUTES + '// edited\n')
    const { env } = deployReadOnly(prod)
    const args = ['serve', '--routes', 'routes.mjs', '--cache', '.fw/cache', '--port', '0']
    const result = await runUnprivileged(args, prod, env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('[FW_TEMP_WRITE]')
  })
})

describe("fw init's server.mjs", () => {
  it('takes an empty HOST as unset, not as every interface', () => {
    const template = readFileSync(join(REPO_ROOT, 'templates/init/server.mjs'), 'utf8')
    expect(template).toContain("const host = process.env.HOST || '127.0.0.1'")
  })
})
