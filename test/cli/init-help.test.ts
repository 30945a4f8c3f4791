/**
 * README audit: what the CLI says about itself agrees with what it does and with the README.
 * `fw init --help` names every file `fw init` writes, as the README's CLI table does.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

/** The files a help text lists after "scaffold a new app:" (up to a blank line), sorted. */
function listedFiles(help: string): string[] {
  const text = /scaffold a new app: ([\s\S]*?)\n\s*\n/.exec(help)?.[1] ?? ''
  return text
    .split(/[,\s]+/)
    .filter((name) => name.includes('.'))
    .sort()
}

describe('fw init --help', () => {
  it('names every file fw init writes, .gitignore included', async () => {
    const dir = makeProject()
    const init = await runFw(['init', 'app'], { cwd: dir })
    expect(init.code, init.stderr).toBe(0)
    const written = readdirSync(join(dir, 'app')).sort()
    expect(written).toContain('.gitignore')

    const help = await runFw(['init', '--help'], { cwd: dir })
    expect(listedFiles(help.stdout)).toEqual(written)
  })
})
