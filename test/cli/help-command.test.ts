/**
 * `fw help <command>`: a command fw does not know is one error line, as `fw <command>` is (it
 * printed the program's help, exit 1, and no word why); a known one prints its own help.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw help', () => {
  it('names a command it does not know, exit 1', async () => {
    const result = await runFw(['help', 'serv'], { cwd: makeProject() })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      "error: unknown command 'serv'",
      '(run fw --help for usage)',
    ])
    expect(result.stdout).toBe('')
  })

  it('prints the help of a command it knows, and of the program, exit 0', async () => {
    const cwd = makeProject()
    const serve = await runFw(['help', 'serve'], { cwd })
    expect(serve.code).toBe(0)
    expect(serve.stdout).toMatch(/^Usage: fw serve \[options\]/)
    const nested = await runFw(['help', 'route:cache', 'build'], { cwd })
    expect(nested.code).toBe(0)
    expect(nested.stdout).toMatch(/^Usage: fw route:cache \[options\] <action>/)
    expect((await runFw(['help', 'help'], { cwd })).stdout).toMatch(/^Usage: fw \[options\]/)
    const all = await runFw(['help'], { cwd })
    expect(all.code).toBe(0)
    expect(all.stdout).toMatch(/^Usage: fw \[options\] \[command\]/)
    expect(all.stdout).toMatch(/help \[command\.\.\.\] +display help for command/)
  })
})
