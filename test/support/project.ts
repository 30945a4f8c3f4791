/**
 * End-to-end helpers: temp projects made from an object of files, and the real `fw` binary (or a
 * plain `node` script) run inside them with colours off and output captured.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const FW_BIN = join(REPO_ROOT, 'bin', 'fw.js')
export const BUILT_CLI = join(REPO_ROOT, 'dist', 'cli', 'index.js')
/** The TypeScript compiler the repo installs, for tests that type-check generated declarations. */
export const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

const TIMEOUT_MS = 30_000
const projects: string[] = []

export interface RunResult {
  /** The exit code; null when the process was killed (e.g. by the timeout). */
  code: number | null
  stdout: string
  stderr: string
}

export interface RunOptions {
  cwd: string
  /** Written to the child's stdin, which is then closed. */
  input?: string
  env?: Record<string, string>
}

/** Throws unless `npm run build` has produced the CLI the binary imports. */
export function assertBuilt(): void {
  if (!existsSync(BUILT_CLI)) {
    throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`)
  }
}

/**
 * Creates a temp directory holding `files` (paths relative to it, folders created as needed).
 * @example
 * const dir = makeProject({ 'routes.mjs': "export default (r) => { r.get('/', () => 'hi') }" })
 */
export function makeProject(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'fw-e2e-'))
  projects.push(dir)
  writeFiles(dir, files)
  return dir
}

/** Writes (or overwrites) files inside a project. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const file = join(dir, name)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
}

/** Removes every project made by `makeProject`; call it from `afterAll`. */
export function cleanupProjects(): void {
  for (const dir of projects.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Names in a directory, sorted (empty when it does not exist). */
export function list(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

/**
 * Runs `node bin/fw.js ...args` in `cwd`.
 * @example
 * const { code, stdout } = await runFw(['route:cache', 'build'], { cwd: dir })
 */
export function runFw(args: readonly string[], options: RunOptions): Promise<RunResult> {
  return runNode([FW_BIN, ...args], options)
}

/**
 * Adds users with the real `fw user:create` (password on stdin) to the store `env` names; throws
 * with fw's output when one cannot be added.
 * @example
 * await createUsers(env, 'correct horse', [{ email: 'ada@example.com', name: 'Ada', roles: 'admin' }])
 */
export async function createUsers(
  env: Record<string, string>,
  password: string,
  users: readonly { email: string; name: string; roles?: string }[],
): Promise<void> {
  for (const { email, name, roles } of users) {
    const args = ['user:create', '--email', email, '--name', name, '--password-stdin']
    const created = await runFw(roles ? [...args, '--roles', roles] : args, {
      cwd: REPO_ROOT,
      env,
      input: `${password}\n`,
    })
    if (created.code !== 0) throw new Error(`fw user:create ${email} failed: ${created.stderr}`)
  }
}

/** Runs an ES module script with `node --input-type=module -e` (to import generated code). */
export function runScript(script: string, options: RunOptions): Promise<RunResult> {
  return runNode(['--input-type=module', '-e', script], options)
}

/** Runs `node ...args`; resolves (never rejects) with the exit code and colourless output. */
export function runNode(args: readonly string[], options: RunOptions): Promise<RunResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env }
  if (!options.env?.FW_DEBUG) delete env.FW_DEBUG
  delete env.NODE_OPTIONS
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env, timeout: TIMEOUT_MS })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({
        code,
        stdout: stripVTControlCharacters(stdout),
        stderr: stripVTControlCharacters(stderr),
      })
    })
    child.stdin.end(options.input ?? '')
  })
}

/** Non-empty lines of some output. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '')
}
