/**
 * `npm run bench` runs for a quarter of an hour and CI never runs it: at least every benchmark
 * script must parse, so a typo cannot wait until the next benchmark run to show.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const BENCH = join(import.meta.dirname, '..', '..', 'bench')

function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.')) return [] // .tmp: generated routes and caches
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return scripts(path)
    return entry.name.endsWith('.mjs') ? [path] : []
  })
}

describe('benchmark scripts', () => {
  const files = scripts(BENCH)

  it('are found', () => {
    expect(files.map((f) => relative(BENCH, f))).toEqual(
      expect.arrayContaining(['run.mjs', 'http/instructions.mjs']),
    )
  })

  it.each(files.map((f) => relative(BENCH, f)))('%s parses', (file) => {
    const result = spawnSync(process.execPath, ['--check', join(BENCH, file)], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })
})
