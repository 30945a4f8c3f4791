/**
 * The auth recipe plugs into the runtime: from src/auth/index.ts no compiler, CLI or serve code
 * is reachable, only Node built-ins and the field libraries it needs.
 */
import { describe, expect, it } from 'vitest'
import { forbiddenFiles, walkImports } from '../support/imports.js'

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
  'cookie',
]
const ALLOWED_PACKAGES = [...RUNTIME_PACKAGES, '@node-rs/argon2', '@node-rs/bcrypt']

describe('auth import boundary', () => {
  const { files, packages } = walkImports('src/auth/index.ts')

  it('reaches no compiler, CLI or serve code', () => {
    expect(forbiddenFiles(files)).toEqual([])
    expect([...files].filter((f) => f.startsWith('src/auth/')).length).toBeGreaterThan(10)
  })

  it('imports only node built-ins and the allowed packages', () => {
    const foreign = [...packages].filter(
      (p) => !p.startsWith('node:') && !ALLOWED_PACKAGES.includes(p),
    )
    expect(foreign).toEqual([])
  })
})
