/**
 * Many static siblings that share their first characters (`/{tenant}/res0` … `/{tenant}/res2999`):
 * the walk switched on a literal's first character only, then tested every literal of that
 * character in turn, so a lookup reaching them tried thousands (~480 µs for `/acme/res5000` of
 * 10,000 routes). They are now a character trie of switches, whose large cases are functions of
 * their own. Structure is asserted, not timings (project rule); the reference matcher checks
 * that the precedence is unchanged (statics first, a failed static subtree falls through to the
 * parameters).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter } from '../../src/compiler/build.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'
import { expectAgreement, nearMiss, type Lookup } from '../support/generated-code.js'
import { ReferenceMatcher } from '../support/reference-matcher.js'
import { Gen, mulberry32 } from '../support/seeded-random.js'

afterAll(cleanupTempDirs)

const LONG = 'x'.repeat(40)

/** `count` literals of one first character under `/{tenant}`, with traps around them. */
function register(count: number): (r: Registrar) => void {
  return (r) => {
    for (let i = 0; i < count; i++) {
      const k = i % 5
      const path =
        k === 0
          ? `/{tenant}/res${i}`
          : k === 1
            ? `/{tenant}/res${i}/{id:int}`
            : k === 2
              ? `/{tenant}/res${i}/edit/{x}`
              : k === 3
                ? `/{tenant}/r${LONG}${i}`
                : `/{tenant}/ré${i}/{s:[a-z]+}`
      r.get(path, noop, `n${i}`)
    }
    // Literals that end where others go on, a chain, a static subtree that fails into params.
    r.get('/{tenant}/res', noop)
    r.get('/{tenant}/res/{id:int}', noop)
    r.get('/{tenant}/r', noop)
    r.get('/{tenant}/res1/deep/er', noop)
    r.get('/{tenant}/{page}/{id:int}', noop)
    r.get('/{tenant}/{page}', noop)
    r.get('/{tenant}/{a}/{b}/{c}', noop)
    r.post('/{tenant}/res2/{rest:.*}', noop)
  }
}

/** The most literal tests in a row within one block: what a lookup may try one after the other. */
function longestRunOfLiteralTests(code: string): number {
  const runs = new Map<number, number>()
  let longest = 0
  for (const line of code.split('\n')) {
    const indent = line.length - line.trimStart().length
    for (const deeper of [...runs.keys()]) if (deeper > indent) runs.delete(deeper)
    if (/^\s*if \(\/\* /.test(line) || /^\s*if \(path\.startsWith\(/.test(line)) {
      const run = (runs.get(indent) ?? 0) + 1
      runs.set(indent, run)
      longest = Math.max(longest, run)
    } else if (line.trim() !== '}') {
      runs.delete(indent)
    }
  }
  return longest
}

async function expectReferenceAgreement(count: number, seed: number): Promise<void> {
  const registrar = collectRoutes(register(count))
  const reference = new ReferenceMatcher(registrar.routes)
  const compiled = await compileRoutes(register(count))
  const g = new Gen(mulberry32(seed))
  const values = ['acme', '42', 'abc', 'x%2Fy', '%C3%A9', '7', 'res', 'res1', 'edit']
  const fill = (path: string): string =>
    path
      .replace(/\{[^}]*\.\*\}/g, () => g.pick(['', 'a', 'a/b/c']))
      .replace(/\{[^}]*\}/g, () => g.pick(values))
      .replace(/\/\/+/g, '/')
      .replace(/é/g, () => g.pick(['%C3%A9', '%c3%a9', 'é', 'e']))
  const paths = ['/acme/res', '/acme/re', '/acme/r', '/acme/res1/deep/er', '/acme/res1/deep']
  for (let i = 0; i < 400; i++) {
    // Near misses: a character less or changed, a segment more, a trailing slash.
    paths.push(
      nearMiss(
        g,
        fill(g.pick(registrar.routes).path),
        ['/x', '/', '/1', '0'],
        ['z', '9', '/', '%41', 's'],
      ),
    )
  }
  const lookups = paths.flatMap((path): Lookup[] => [
    ['GET', path],
    ['POST', path],
  ])
  expectAgreement(reference, compiled, lookups)
}

describe('thousands of static siblings sharing their first characters', () => {
  it('tests no more than a few literals in a row (was ~2,000 literals of an r, one by one)', () => {
    const output = buildRouter(collectRoutes(register(2000)).routes)
    const dynamic = output.files.get('__dynamic.mjs')!
    expect(dynamic).toContain('switch (path.charCodeAt(j2 + 3)) {')
    expect(dynamic).toMatch(/function W\d+\(/)
    expect(longestRunOfLiteralTests(dynamic)).toBeLessThanOrEqual(8)
  })

  it('agrees with the reference matcher, one function per shard method (no outlining)', async () => {
    await expectReferenceAgreement(120, 81)
  })

  it('agrees with the reference matcher when the switches are split into functions', async () => {
    await expectReferenceAgreement(2000, 82)
  })
})
