/**
 * Checks on generated router code at scale: the size of its functions against what V8 optimises,
 * and its answers against the reference matcher.
 */
import { expect } from 'vitest'
import type { CompiledModule } from './compile.js'
import { asReferenceResult, type ReferenceMatcher } from './reference-matcher.js'
import type { Gen } from './seeded-random.js'

// Source characters; V8 optimises no function of more than ~60 KB of bytecode, and a generated
// function of N characters compiles to ~0.6-0.9 N bytes of bytecode.
export const FUNCTION_MAX = 60_000

/** Each function at the top level or in a shard's bind() (not bind itself), with its size. */
export function functionSizes(code: string): { name: string; size: number }[] {
  const sizes: { name: string; size: number }[] = []
  let current: { name: string; size: number; end: string } | null = null
  for (const line of code.split('\n')) {
    const open = /^( {0,2})(?:export )?(?:async )?function (\w+)\(/.exec(line)
    if (!current && open && open[2] !== 'bind')
      current = { name: open[2]!, size: 0, end: `${open[1]}}` }
    if (current) current.size += line.length + 1
    if (current && line === current.end) {
      sizes.push(current)
      current = null
    }
  }
  return sizes
}

export type Lookup = [method: string, path: string, host?: string]

/**
 * Expects `compiled` to answer every lookup as `reference` does; returns how many were hits and
 * how many each miss status.
 */
export function expectAgreement(
  reference: ReferenceMatcher,
  compiled: CompiledModule,
  lookups: readonly Lookup[],
): Record<string, number> {
  const outcomes: Record<string, number> = {}
  for (const [method, path, host] of lookups) {
    const expected = reference.match(method, path, host)
    const got = asReferenceResult(compiled.match(method, path, host) as never)
    // Compared as JSON first (thousands of lookups); a difference is asserted in full.
    if (JSON.stringify(got) !== JSON.stringify(expected))
      expect({ method, host, path, got }).toEqual({ method, host, path, got: expected })
    const key = 'route' in expected ? 'hit' : String(expected.status)
    outcomes[key] = (outcomes[key] ?? 0) + 1
  }
  return outcomes
}

/**
 * `path`, or a near miss of it, one time in five each: a character less, `append` added, or a
 * character replaced by one of `replace`.
 */
export function nearMiss(
  g: Gen,
  path: string,
  append: readonly string[],
  replace: readonly string[],
): string {
  const change = g.int(5)
  if (change === 0) return path.slice(0, -1)
  if (change === 1) return path + g.pick(append)
  if (change === 2 && path.length > 2) {
    const at = 1 + g.int(path.length - 1)
    return path.slice(0, at) + g.pick(replace) + path.slice(at + 1)
  }
  return path
}
