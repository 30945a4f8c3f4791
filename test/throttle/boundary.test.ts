/**
 * The throttle module plugs into the production runtime: it reaches no compiler, CLI or serve
 * code, imports only Node built-ins (and ioredis), and loads ioredis only when a Redis store is
 * made, so a memory-only server never pays for it.
 */
import { describe, expect, it } from 'vitest'
import { forbiddenFiles, walkImports } from '../support/imports.js'

describe('src/throttle import boundary', () => {
  it('reaches no compiler, CLI or serve code and only built-ins and ioredis', () => {
    const { files, packages } = walkImports('src/throttle/index.ts')
    expect(forbiddenFiles(files)).toEqual([])
    expect([...packages].filter((p) => !p.startsWith('node:') && p !== 'ioredis')).toEqual([])
  })

  it('does not load ioredis until a Redis store is made', () => {
    const { packages } = walkImports('src/throttle/index.ts', { dynamic: false })
    expect(packages.has('ioredis')).toBe(false)
  })
})
