/**
 * The code and hint of errors while a routes file is bundled: a file that cannot be read is
 * FW_ROUTES_READ with a hint about permissions (not "does not compile"), and a syntax error in an
 * imported file sends the user to that file.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileError } from '../../src/compiler/import-errors.js'
import {
  assertBuilt,
  cleanupProjects,
  FW_BIN,
  lines,
  makeProject,
  runFw,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('a syntax error in a file the routes file imports', () => {
  it('is located in that file, and the hint names it', async () => {
    const dir = makeProject({
      'routes.ts': `import { h } from './lib.ts'\nexport default (r) => {\n  r.get('/', h)\n}\n`,
      'lib.ts': `export const h = () => 'x'\n\n)\n`,
    })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(result.code).toBe(1)
    const [error, hint, ...rest] = lines(result.stderr)
    expect(rest).toEqual([])
    expect(error).toMatch(/^error lib\.ts:3:1: .*\[FW_ROUTES_SYNTAX\]$/)
    expect(hint).toBe('  hint: Fix lib.ts (imported by routes.ts) so that it compiles.')
  })

  it('in the routes file itself still names the routes file', async () => {
    const dir = makeProject({ 'routes.ts': `export default (r) => {\n  r.get('/', () => 'x'\n}\n` })
    const result = await runFw(['routes:list', '--routes', 'routes.ts'], { cwd: dir })
    expect(lines(result.stderr)[1]).toBe('  hint: Fix routes.ts so that it compiles.')
  })
})

describe('a file esbuild cannot read', () => {
  // esbuild's words for an unreadable file; as root (tests, CI) no file is unreadable.
  const failure = (text: string, location: object | null = null): unknown => ({
    errors: [{ text, location }],
    warnings: [],
  })

  it('is FW_ROUTES_READ with a hint about permissions, not a compile error', () => {
    const file = join(process.cwd(), 'unread.ts')
    const error = compileError(failure('Cannot read file "unread.ts": permission denied'), file)
    expect(error.code).toBe('FW_ROUTES_READ')
    expect(error.message).toBe('Cannot read unread.ts: permission denied')
    expect(error.hint).toBe(
      'Give the user running fw read access to unread.ts (e.g. chmod a+r unread.ts).',
    )
  })

  it('names the imported file and points at the import', () => {
    const file = join(process.cwd(), 'routes.ts')
    const error = compileError(
      failure('Cannot read file "lib/secret.ts": permission denied', {
        file: 'routes.ts',
        line: 1,
        column: 18,
      }),
      file,
    )
    expect(error).toMatchObject({
      code: 'FW_ROUTES_READ',
      location: { file: 'routes.ts', line: 1, column: 19 },
    })
    expect(error.message).toBe(`Cannot read ${join('lib', 'secret.ts')}: permission denied`)
  })

  it('other read failures get a plain hint', () => {
    const error = compileError(
      failure('Cannot read file "dev.ts": input/output error'),
      join(process.cwd(), 'dev.ts'),
    )
    expect(error).toMatchObject({
      code: 'FW_ROUTES_READ',
      hint: 'Check that dev.ts is a readable file.',
    })
  })

  const canRunAsNobody =
    process.getuid?.() === 0 &&
    spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', ''], { timeout: 10_000 })
      .status === 0

  it.skipIf(!canRunAsNobody)(
    'is one FW_ROUTES_READ line from the binary run as nobody (mode 000)',
    () => {
      const dir = makeProject({
        'unread.ts': `export default (r) => {\n  r.get('/', () => 'x')\n}\n`,
      })
      chmodSync(dir, 0o755)
      chmodSync(join(dir, 'unread.ts'), 0o000)
      const run = spawnSync(
        'runuser',
        ['-u', 'nobody', '--', process.execPath, FW_BIN, 'routes:list', '--routes', 'unread.ts'],
        {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
          encoding: 'utf8',
          timeout: 30_000,
        },
      )
      expect(run.status).toBe(1)
      expect(lines(stripVTControlCharacters(run.stderr))).toEqual([
        'error Cannot read unread.ts: permission denied [FW_ROUTES_READ]',
        '  hint: Give the user running fw read access to unread.ts (e.g. chmod a+r unread.ts).',
      ])
    },
  )
})
