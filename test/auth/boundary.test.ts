/**
 * The auth recipe plugs into the runtime: from src/auth/index.ts no compiler, CLI or serve code
 * is reachable, only Node built-ins and the field libraries it needs.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')
// The runtime's field libraries (reached through the request and response types) and auth's own.
const RUNTIME_PACKAGES = [
  'jose',
  'negotiator',
  'proxy-addr',
  'busboy',
  'ioredis',
  'pg',
  'better-sqlite3',
  'pino',
]
const ALLOWED_PACKAGES = [...RUNTIME_PACKAGES, '@node-rs/argon2', '@node-rs/bcrypt']
const FORBIDDEN_DIRS = ['src/compiler/', 'src/cli/', 'src/serve/']

function walkImports(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(join(ROOT, file), 'utf8')
    const specifiers = [
      ...source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm),
      ...source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
    ].map((m) => m[1]!)
    for (const specifier of specifiers) {
      if (!specifier.startsWith('.')) packages.add(specifier)
      else visit(relative(ROOT, resolve(ROOT, dirname(file), specifier.replace(/\.js$/, '.ts'))))
    }
  }
  visit(entry)
  return { files, packages }
}

describe('auth import boundary', () => {
  const { files, packages } = walkImports('src/auth/index.ts')

  it('reaches no compiler, CLI or serve code', () => {
    expect([...files].filter((f) => FORBIDDEN_DIRS.some((dir) => f.startsWith(dir)))).toEqual([])
    expect([...files].filter((f) => f.startsWith('src/auth/')).length).toBeGreaterThan(10)
  })

  it('imports only node built-ins and the allowed packages', () => {
    const foreign = [...packages].filter(
      (p) => !p.startsWith('node:') && !ALLOWED_PACKAGES.includes(p),
    )
    expect(foreign).toEqual([])
  })
})
