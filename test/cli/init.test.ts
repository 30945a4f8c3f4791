/**
 * `fw init` where the folder cannot be made or written: one user error line naming the path, a
 * hint, exit 1; and the `next:` line it prints can be pasted into a shell as it is.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  FW_BIN,
  lines,
  list,
  makeProject,
  REPO_ROOT,
  runFw,
  runNode,
  type RunResult,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

/** Exit 1, nothing on stdout, `error <message> [FW_INIT_WRITE]` then a hint, no stack. */
function expectInitError(result: RunResult): string {
  expect(result.code, result.stderr).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr).not.toMatch(/^ {4}at /m)
  expect(result.stderr).not.toMatch(/bug in fw/)
  const [error = '', hint = '', ...rest] = lines(result.stderr)
  expect(rest).toEqual([])
  expect(error).toMatch(/^error .* \[FW_INIT_WRITE\]$/)
  expect(hint).toMatch(/^ {2}hint: \S/)
  return error
}

// The tests run as root, which may write anywhere: the error the system would give is put in
// place of node:fs/promises' mkdir for the real binary (builtin ESM exports follow the object).
const FAILING_MKDIR = (code: string): string => `import fs from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
fs.mkdir = async (path) => {
  throw Object.assign(new Error(\`${code}: mkdir '\${path}'\`), { code: '${code}', syscall: 'mkdir', path })
}
syncBuiltinESMExports()
`

describe('fw init where the folder cannot be made or written', () => {
  it('reports a file given as the folder by name, and leaves it alone', async () => {
    const dir = makeProject({ afile: 'mine' })
    const error = expectInitError(await runFw(['init', 'afile'], { cwd: dir }))
    expect(error).toBe(
      'error Cannot create the app in afile: it is a file, not a folder [FW_INIT_WRITE]',
    )
    expect(readFileSync(join(dir, 'afile'), 'utf8')).toBe('mine')
  })

  it('reports a file among the parent folders (ENOTDIR), naming that file', async () => {
    const dir = makeProject({ afile: 'mine' })
    const error = expectInitError(await runFw(['init', 'afile/sub'], { cwd: dir }))
    expect(error).toBe(
      'error Cannot create the app in afile/sub: afile is a file, not a folder (ENOTDIR) [FW_INIT_WRITE]',
    )
    expect(list(dir)).toEqual(['afile'])
  })

  it.each([
    ['EACCES', 'permission denied', /permissions/],
    ['EROFS', 'the file system is read-only', /writable disk/],
  ])(
    'reports %s from the file system as a user error naming the folder',
    async (code, says, hint) => {
      const dir = makeProject({ 'fail.mjs': FAILING_MKDIR(code) })
      const result = await runNode(['--import', './fail.mjs', FW_BIN, 'init', 'my-app'], {
        cwd: dir,
      })
      const error = expectInitError(result)
      expect(error).toBe(`error Cannot create the app in my-app: ${says} (${code}) [FW_INIT_WRITE]`)
      expect(lines(result.stderr)[1]).toMatch(hint)
    },
  )
})

describe('fw init, next steps', () => {
  it('quotes a folder with a space in the cd it suggests', async () => {
    const dir = makeProject()
    const result = await runFw(['init', 'my app'], { cwd: dir })
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(join(dir, 'my app', 'routes.ts'))).toBe(true)
    expect(lines(result.stdout)).toContain(
      "next: cd 'my app' && npm install && npx fw serve --watch",
    )
  })

  it("quotes shell symbols, a ' included, and leaves a plain path as it is", async () => {
    const dir = makeProject()
    const quoted = await runFw(['init', "it's$x"], { cwd: dir })
    expect(quoted.code, quoted.stderr).toBe(0)
    expect(lines(quoted.stdout)).toContain(
      "next: cd 'it'\\''s$x' && npm install && npx fw serve --watch",
    )
    const plain = await runFw(['init', 'apps/my-app'], { cwd: dir })
    expect(plain.code, plain.stderr).toBe(0)
    expect(lines(plain.stdout)).toContain(
      'next: cd apps/my-app && npm install && npx fw serve --watch',
    )
  })
})

describe('fw init never writes through what is there', () => {
  it('counts a symbolic link pointing nowhere as a file that is there, and creates nothing where it points', async () => {
    const dir = makeProject()
    symlinkSync(join(dir, 'elsewhere.ts'), join(dir, 'routes.ts'))
    const result = await runFw(['init', '.'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toBe('error . already has routes.ts [FW_INIT_EXISTS]')
    expect(list(dir)).toEqual(['routes.ts'])
    expect(existsSync(join(dir, 'elsewhere.ts'))).toBe(false)
  })
})

describe('the scaffolded server.mjs', () => {
  /** `fw init` into a fresh folder, with this copy of fw installed as npm would link it. */
  async function scaffold(): Promise<string> {
    const dir = join(makeProject(), 'app')
    expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    return dir
  }

  it('says to build the cache when there is none: one line, exit 1, no stack', async () => {
    const dir = await scaffold()
    const result = await runNode([join(dir, 'server.mjs')], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      `error no route cache in ${join(dir, '.fw', 'cache')}: run \`npx fw route:cache build\` first`,
    ])
  })

  it('refuses a misspelt kernel option at start: one line naming it and the option meant, exit 1', async () => {
    const dir = await scaffold()
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    const server = join(dir, 'server.mjs')
    const boot = 'Kernel.boot({ routeCache, register })'
    expect(readFileSync(server, 'utf8')).toContain(boot)
    // Booted after all (the typo ignored), it would exit 0 once listening, not serve on.
    const edited = readFileSync(server, 'utf8').replace(
      boot,
      'Kernel.boot({ routeCache, register, requestScopeEnbled: true })',
    )
    writeFileSync(server, `${edited}\nserver.once('listening', () => process.exit(0))\n`)
    const result = await runNode([server], { cwd: dir, env: { PORT: '0' } })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(lines(result.stderr)).toEqual([
      'error Kernel.boot(): unknown option `requestScopeEnbled` — did you mean `requestScopeEnabled`? [FW_SERVE_CONFIG]',
    ])
  })

  it('reports a port in use in one line, exit 1, no stack', async () => {
    const dir = await scaffold()
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    const busy = createServer()
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done))
    try {
      const { port } = busy.address() as AddressInfo
      const result = await runNode([join(dir, 'server.mjs')], {
        cwd: dir,
        env: { PORT: String(port) },
      })
      expect(result.code).toBe(1)
      expect(lines(result.stderr)).toEqual([
        `error cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      ])
    } finally {
      busy.close()
    }
  })
})
