/**
 * A boot error caused by the `kernel` options of fw.config.* names that file and the line of its
 * `kernel` key, as every user error of the CLI does: one line, a hint, exit 1, no stack unless
 * --debug; also from a --workers worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {\n  r.get('/', () => 'home')\n}\n`

function project(kernel: string, before = ''): string {
  return makeProject({
    'routes.mjs': ROUTES,
    'fw.config.mjs': `${before}export default {\n  routes: 'routes.mjs',\n  kernel: ${kernel},\n}\n`,
  })
}

describe('fw serve with bad kernel options in fw.config.mjs', () => {
  it('an unknown matcher is one line at the kernel key, and a hint; exit 1', async () => {
    const result = await runFw(['serve', '--port', '0'], { cwd: project(`{ matcher: 'linear' }`) })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error fw.config.mjs:3:3: Unknown matcher "linear" [FW_SERVE_CONFIG]',
      "  hint: The only matcher is 'sharded' (the default): pass matcher: 'sharded' or leave it out.",
    ])
  })

  it('an option out of range is a user error at the kernel key, not "a bug in fw"', async () => {
    const dir = project(`{\n    errorRendererTimeoutMs: -1,\n  }`)
    const result = await runFw(['serve', '--port', '0'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error fw.config.mjs:3:3: errorRendererTimeoutMs must be a number of milliseconds above 0, not -1 [FW_SERVE_CONFIG]',
      '  hint: Fix kernel in fw.config.mjs (run with --debug for the stack).',
    ])
  })

  it('a service provider that fails names the file from a --workers worker too; --debug adds the stack', async () => {
    const dir = project(
      `{ serviceProviders: [MailProvider] }`,
      `class MailProvider {\n  boot() { throw new Error('no SMTP host') }\n}\n`,
    )
    const env = { JWT_SECRET: 'x'.repeat(40) }
    const result = await runFw(['serve', '--port', '0', '--workers', '2'], { cwd: dir, env })
    expect(result.code).toBe(1)
    const printed = lines(result.stderr)
    expect(printed.slice(0, 2)).toEqual([
      'error fw.config.mjs:6:3: serviceProviders[0] (MailProvider) failed in boot(): no SMTP host [FW_SERVE_CONFIG]',
      '  hint: Fix kernel in fw.config.mjs (run with --debug for the stack).',
    ])
    expect(result.stderr).not.toMatch(/^\s+at /m)
    const debug = await runFw(['serve', '--port', '0', '--debug'], { cwd: dir, env })
    expect(debug.code).toBe(1)
    expect(lines(debug.stderr)[0]).toMatch(/^error fw\.config\.mjs:6:3: serviceProviders\[0\]/)
    expect(debug.stderr).toMatch(/cause: Error: no SMTP host\n\s+at MailProvider\.boot/)
  })
})
