/**
 * Regression: `fw init /` scaffolded the app into the file-system root, and `fw init ~` into the
 * home folder, whose package.json then made every project below part of that app (npm and Node
 * look up the folders for one); `fw init ""` (an unset shell variable) took the working folder.
 * Each is refused, and nothing is written.
 */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  list,
  makeProject,
  runFw,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw init into a folder that is no app’s own', () => {
  it('refuses the root, the home folder, a folder above it and an empty name', async () => {
    const outer = makeProject({})
    const home = join(outer, 'users', 'ada')
    const work = join(home, 'work')
    mkdirSync(work, { recursive: true })
    const env = { HOME: home }
    const cases: Array<[string, string]> = [
      ['/', 'it is the file-system root'],
      [home, 'it is your home folder'],
      ['..', 'it is your home folder'],
      [join(outer, 'users'), 'it holds your home folder'],
      ['', 'the name is empty'],
    ]
    const rootHadRoutes = existsSync('/routes.ts')
    for (const [dir, why] of cases) {
      const result = await runFw(['init', dir], { cwd: work, env })
      expect(result.code, result.stderr).toBe(1)
      expect(result.stdout).toBe('')
      expect(lines(result.stderr)).toEqual([
        `error Refusing to create an app in ${JSON.stringify(dir)}: ${why} [FW_INIT_UNSAFE_DIR]`,
        '  hint: Give the app a folder of its own, e.g. fw init my-app.',
      ])
    }
    expect(list(home)).toEqual(['work'])
    expect(list(work)).toEqual([])
    expect(list(join(outer, 'users'))).toEqual(['ada'])
    expect(existsSync('/routes.ts')).toBe(rootHadRoutes)
  })

  it('still scaffolds into a folder inside the home folder, and into the working one', async () => {
    const home = makeProject({})
    const work = join(home, 'app')
    mkdirSync(work)
    for (const dir of ['.', 'nested']) {
      const result = await runFw(['init', dir], { cwd: work, env: { HOME: home } })
      expect(result.code, result.stderr).toBe(0)
      expect(list(join(work, dir))).toContain('routes.ts')
    }
  })

  it('knows the home folder through a symbolic link, and with an empty HOME the user’s own', async () => {
    const outer = makeProject({})
    const real = join(outer, 'real', 'ada')
    mkdirSync(join(real, 'work'), { recursive: true })
    symlinkSync(join(outer, 'real'), join(outer, 'home'))
    const env = { HOME: join(outer, 'home', 'ada') }
    for (const dir of [real, join(outer, 'real')]) {
      const result = await runFw(['init', dir], { cwd: join(real, 'work'), env })
      expect(result.code, result.stderr).toBe(1)
      expect(result.stderr).toMatch(/your home folder \[FW_INIT_UNSAFE_DIR\]/)
    }
    expect(list(real)).toEqual(['work'])
    // With HOME empty, the user's own home (from the system's list of users) is still refused.
    const own = await runFw(['init', userInfo().homedir], { cwd: real, env: { HOME: '' } })
    expect(own.code, own.stderr).toBe(1)
    expect(own.stderr).toMatch(/\[FW_INIT_UNSAFE_DIR\]/)
    const empty = await runFw(['init', '.'], { cwd: join(real, 'work'), env: { HOME: '' } })
    expect(empty.code, empty.stderr).toBe(0)
    expect(list(join(real, 'work'))).toContain('routes.ts')
  })
})
