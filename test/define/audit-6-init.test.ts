/**
 * Audit 6 of `fw init`'s scaffold: its server.mjs read PORT with Number(), so `PORT=' '` (0) listened
 * on a random port and `PORT=0x1F90` on 8080, where `fw serve` refuses both. Now it takes decimal
 * digits only, and says so in one line, exit 1.
 */
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  makeProject,
  REPO_ROOT,
  runFw,
  runNode,
} from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('the scaffolded server.mjs', () => {
  it('refuses a PORT that is not decimal digits, as fw serve does', async () => {
    const dir = join(makeProject(), 'app')
    expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    for (const port of [' ', '0x1F90', '1e3', '70000']) {
      const result = await runNode([join(dir, 'server.mjs')], { cwd: dir, env: { PORT: port } })
      expect(result.code, port).toBe(1)
      expect(result.stdout).toBe('')
      expect(lines(result.stderr)).toEqual([
        `error PORT=${port} is not a port number (0 to 65535, in decimal)`,
      ])
    }
  }, 60_000)
})
