/**
 * The throttle module plugs into the production runtime: it reaches no compiler, CLI or serve
 * code, imports only Node built-ins (and ioredis), and loads ioredis only when a Redis store is
 * made, so a memory-only server never pays for it.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')

/** Files and bare specifiers reachable from `entry`; `dynamic` includes `import()` edges. */
function walk(entry: string, dynamic: boolean): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(join(ROOT, file), 'utf8')
    const specifiers = [
      ...source.matchAll(/^\s*import\s(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
      ...source.matchAll(/^\s*export\s(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
      ...(dynamic ? source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g) : []),
    ].map((m) => m[1]!)
    for (const specifier of specifiers) {
      if (!specifier.startsWith('.')) packages.add(specifier)
      else visit(relative(ROOT, resolve(ROOT, dirname(file), specifier.replace(/\.js$/, '.ts'))))
    }
  }
  visit(entry)
  return { files, packages }
}

describe('src/throttle import boundary', () => {
  it('reaches no compiler, CLI or serve code and only built-ins and ioredis', () => {
    const { files, packages } = walk('src/throttle/index.ts', true)
    expect([...files].filter((f) => /^src\/(compiler|cli|serve)\//.test(f))).toEqual([])
    expect([...packages].filter((p) => !p.startsWith('node:') && p !== 'ioredis')).toEqual([])
  })

  it('does not load ioredis until a Redis store is made', () => {
    const { packages } = walk('src/throttle/index.ts', false)
    expect(packages.has('ioredis')).toBe(false)
  })
})
