/**
 * What the audit found the build let through or crashed on, run as the real binary: each is now
 * one error line naming routes.ts:line, with a hint, and the previous cache stays as it was.
 * Regressions: regexes that backtrack for seconds (`(a|a)*`: 13 s on 29 characters) built; a
 * constraint that needs a "/" built into a dead route; half a surrogate pair crashed the build
 * ("URI malformed", reported as a bug in fw, no file:line).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  makeProject,
  runFw,
  writeFiles,
} from '../support/project.js'

const BUILD = ['route:cache', 'build', '--routes', 'routes.ts', '--cache', 'cache']
const routes = (path: string): string =>
  `export default (r) => {\n  r.get('/', () => 'home')\n  r.get('${path}', () => 'x')\n}\n`

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('fw route:cache build rejects', () => {
  it.each([
    ['/a/{x:(a|a)*}', 'FW_REGEX_UNSAFE'],
    ['/a/{x:(a|aa)+}', 'FW_REGEX_UNSAFE'],
    ['/a/{x:a*a*a*b}', 'FW_REGEX_UNSAFE'],
    ['/a/{x:a/b}', 'FW_REGEX_NEVER_MATCHES'],
    // A request path never holds a raw non-ASCII character or whitespace: é arrives as %C3%A9.
    ['/a/{x:café}', 'FW_REGEX_NEVER_MATCHES'],
    ['/a/{x:\\\\s+}', 'FW_REGEX_NEVER_MATCHES'],
    ['/z/\\ud83d', 'FW_PATTERN_INVALID'],
  ])('%s with %s, as one line at routes.ts:3', async (path, code) => {
    const dir = makeProject({ 'routes.ts': routes('/ok') })
    expect((await runFw(BUILD, { cwd: dir })).code).toBe(0)
    const manifest = readFileSync(join(dir, 'cache', 'manifest.json'), 'utf8')
    writeFiles(dir, { 'routes.ts': routes(path) })
    const result = await runFw(BUILD, { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toMatch(/bug in fw|^ {4}at /m)
    const [error = '', hint, ...rest] = lines(result.stderr)
    expect(rest).toEqual([])
    expect(error).toMatch(new RegExp(`^error routes\\.ts:3:\\d+: .* \\[${code}\\]$`))
    expect(hint).toMatch(/^ {2}hint: \S/)
    expect(readFileSync(join(dir, 'cache', 'manifest.json'), 'utf8')).toBe(manifest)
  })
})

describe('a domain parameter whose regex no lowercased host label matches', () => {
  const domainRoutes = (domain: string): string =>
    `export default (r) => {\n  r.get('/', () => 'home')\n  r.group({ domain: '${domain}' }, (r) => {\n    r.get('/c', () => 'x', 'c')\n  })\n}\n`

  it('is refused: the Host is matched lowercased, so {code:[A-Z]{3}} was a dead route', async () => {
    const dir = makeProject({ 'routes.ts': domainRoutes('{code:[A-Z]{3}}.up.test') })
    const result = await runFw(BUILD, { cwd: dir })
    expect(result.code).toBe(1)
    const [error = '', hint] = lines(result.stderr)
    expect(error).toMatch(
      /^error routes\.ts:4:\d+: .*"code" \(\[A-Z\]\{3\}\) can never match a host label: the Host is matched lowercased.* \[FW_REGEX_NEVER_MATCHES\]$/,
    )
    expect(hint).toBe(
      '  hint: Host names are case-insensitive: write the constraint in lowercase letters ([a-z]{3}).',
    )
  })

  it('is refused for a literal label no Host can carry', async () => {
    const dir = makeProject({ 'routes.ts': domainRoutes('{t}.ex ample.com') })
    const result = await runFw(BUILD, { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)[0]).toMatch(
      /^error routes\.ts:4:\d+: Pattern "\{t\}\.ex ample\.com": the label "ex ample" holds a character no Host can.* \[FW_PATTERN_INVALID\]$/,
    )
  })

  it('builds when it can match a lowercase label', async () => {
    for (const domain of ['{code:[a-z]{3}}.up.test', '{code:[A-Za-z]{3}}.up.test']) {
      const dir = makeProject({ 'routes.ts': domainRoutes(domain) })
      expect((await runFw(BUILD, { cwd: dir })).code, domain).toBe(0)
    }
  })
})
