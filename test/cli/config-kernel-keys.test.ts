/**
 * A typo in fw.config.ts's `kernel` options (`errorRender`, `requestScopeEnable`) was ignored
 * without a word: the option was silently off. Now it is FW_CONFIG_INVALID at its line, with the
 * option it was probably meant to be; routeCache and register, which fw serve sets from the
 * config's cache and routes, are refused with the top-level key to use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig } from '../../src/cli/config.js'
import { KERNEL_OPTIONS } from '../../src/runtime/kernel-options.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `export default (r) => {\n  r.get('/', () => 'home')\n}\n`

describe('kernel options in fw.config.ts', () => {
  it('refuses a misspelt option at its line, naming the one it resembles', async () => {
    const dir = makeProject({
      'routes.ts': ROUTES,
      'fw.config.ts': `export default {\n  kernel: {\n    requestScopeEnable: true,\n  },\n}\n`,
    })
    const result = await runFw(['serve', '--port', '0'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(
        /^error fw\.config\.ts:3:5: Unknown kernel option "requestScopeEnable" in the config file \[FW_CONFIG_INVALID\]$/,
      ),
      '  hint: Did you mean "requestScopeEnabled"?',
    ])
  })

  it('lists the options for a key that resembles none', async () => {
    const dir = makeProject({ 'fw.config.ts': `export default { kernel: { colour: 'blue' } }\n` })
    await expect(readConfig(dir)).rejects.toMatchObject({
      code: 'FW_CONFIG_INVALID',
      message: 'Unknown kernel option "colour" in the config file',
      hint: expect.stringMatching(/^Kernel options: matcher, log, env, .*signingKeys\.$/),
    })
  })

  it('refuses routeCache and register, which fw serve sets from cache and routes', async () => {
    const dir = makeProject({ 'fw.config.ts': `export default { kernel: { routeCache: 'x' } }\n` })
    await expect(readConfig(dir)).rejects.toMatchObject({
      code: 'FW_CONFIG_INVALID',
      message: 'kernel.routeCache is set by fw serve',
      hint: "Write cache: '.fw/cache' at the top level of the config.",
    })
  })

  it('accepts every option Kernel.boot takes but those fw serve sets (one list for both)', async () => {
    const names = KERNEL_OPTIONS.filter((name) => name !== 'routeCache' && name !== 'register')
    const kernel = names.map((name) => `${name}: undefined`).join(', ')
    const dir = makeProject({ 'fw.config.ts': `export default { kernel: { ${kernel} } }\n` })
    expect(Object.keys((await readConfig(dir)).kernel ?? {})).toEqual(names)
  })

  it('accepts every option the README shows', async () => {
    const dir = makeProject({
      'fw.config.ts': `export default { kernel: { requestScopeEnabled: true, sendTimeoutMs: 120_000, serviceProviders: [], builtins: false } }\n`,
    })
    expect((await readConfig(dir)).kernel).toMatchObject({ sendTimeoutMs: 120_000 })
  })
})
