/**
 * Every code fw throws is in ERROR_CODES, the registry the README points users to (FW_URL_BASE
 * was thrown by urlFor but missing there, and from router.d.mts's UrlGenerationError type).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/shared/errors.js'

const ROOT = join(import.meta.dirname, '..', '..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(?:ts|mjs)$/.test(name) ? [path] : []
  })
}

/** The codes thrown as `new FwError('FW_…'` or `new UrlGenerationError('FW_…'`, by file. */
function thrownCodes(): Map<string, string> {
  const codes = new Map<string, string>()
  for (const file of [...sources(join(ROOT, 'src')), join(ROOT, 'templates/cache/helpers.mjs')]) {
    const text = readFileSync(file, 'utf8')
    for (const [, code] of text.matchAll(/(?:FwError|UrlGenerationError)\(\s*'(FW_[A-Z_]+)'/g))
      codes.set(code!, file)
  }
  return codes
}

describe('ERROR_CODES', () => {
  it('lists every code fw throws', () => {
    const thrown = thrownCodes()
    expect(thrown.size).toBeGreaterThan(20)
    const missing = [...thrown].filter(([code]) => !(code in ERROR_CODES))
    expect(missing).toEqual([])
  })

  it("lists urlFor's codes in router.d.mts's UrlGenerationError type", () => {
    const types = readFileSync(join(ROOT, 'src/compiler/emit/types.ts'), 'utf8')
    const url = Object.keys(ERROR_CODES).filter((code) => code.startsWith('FW_URL_'))
    for (const code of url) expect(types).toContain(`'${code}'`)
  })
})
