/**
 * Differential test: the compiled matcher and the reference matcher must agree on every lookup,
 * over seeded random route tables and random, derived and adversarial paths.
 * FW_PARITY_SCALE=10 runs ten times as many tables (a larger run for local use).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { FwError } from '../../src/shared/errors.js'
import type { RouteRecord } from '../../src/shared/route-record.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'
import { asReferenceResult, ReferenceMatcher } from '../support/reference-matcher.js'
import { Gen, mulberry32 } from '../support/seeded-random.js'

const SCALE = Number(process.env.FW_PARITY_SCALE ?? '1')
const TABLES = 120 * SCALE
const LOOKUPS_PER_TABLE = 900
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const
const WORDS = [
  'a',
  'b',
  'users',
  'posts',
  'api',
  'v1',
  'x',
  'files',
  'A',
  'caf%C3%A9',
  '1',
  'abc',
  '%41b',
]

const PARAM_FORMS = [
  '{p}',
  '{p:int}',
  '{p:uuid}',
  '{p:hex}',
  '{p:slug}',
  '{p:[A-Z]{3}}',
  '{p:[a-z]+\\.txt}',
  '{p:[^x]+}',
  '{p:a|ab}',
]

function randomPattern(g: Gen, catchAll: boolean, staticFirst = false): string {
  const depth = 1 + g.int(4)
  const segments: string[] = []
  for (let i = 0; i < depth; i++) {
    const literal = (staticFirst && i === 0) || g.chance(0.55)
    segments.push(literal ? g.pick(WORDS) : g.pick(PARAM_FORMS).replace('p', `p${i}`))
  }
  if (catchAll) segments.push(`{rest:${g.pick(['.*', '.+'])}}`)
  else if (g.chance(0.15)) segments.push(`{opt${depth}?}`)
  return '/' + segments.join('/')
}

/** Registers random routes, keeping only those the analyzer accepts (so the table is valid). */
function randomTable(g: Gen): RouteRecord[] {
  const accepted: { method: string; path: string; host: string | null }[] = []
  const tryAdd = (route: { method: string; path: string; host: string | null }): void => {
    const candidate = [...accepted, route]
    const registrar = collectRoutes((r) => register(r, candidate))
    try {
      analyzeRoutes(registrar.routes, new Set())
      accepted.push(route)
    } catch (error) {
      if (!(error instanceof FwError)) throw error
    }
  }
  const count = 5 + g.int(35)
  // One table in three is shaped like most APIs: no domain routes, and every path starts with a
  // literal segment (the matcher then answers some misses without its any-method walk).
  const apiLike = g.chance(1 / 3)
  for (let i = 0; i < count; i++) {
    const host = !apiLike && g.chance(0.1) ? g.pick(['{t}.ex.com', 'api.ex.com']) : null
    tryAdd({
      method: g.pick(METHODS),
      path: g.chance(0.05) ? '/' : randomPattern(g, false, apiLike),
      host,
    })
  }
  for (let i = 0, n = g.int(4); i < n; i++) {
    const path = !apiLike && g.chance(0.3) ? '/{rest:.*}' : randomPattern(g, true, apiLike)
    tryAdd({ method: g.pick(METHODS), path, host: null })
  }
  return collectRoutes((r) => register(r, accepted)).routes
}

function register(
  r: Registrar,
  routes: { method: string; path: string; host: string | null }[],
): void {
  for (const route of routes) {
    const verb = route.method.toLowerCase() as 'get'
    if (route.host) r.group({ domain: route.host }, (r) => r[verb](route.path, noop))
    else r[verb](route.path, noop)
  }
}

const VALUES: Record<string, string[]> = {
  '{p}': ['a', 'users', '42', 'x%2Fy', '%E0%A4%A', 'caf%C3%A9', 'ABC', 'a-b', '%', 'x.txt'],
  '{p:int}': ['0', '7', '0042', '123456789012345', '1234567890123456', '-1', '1e3'],
  '{p:uuid}': [
    '123e4567-e89b-12d3-a456-426614174000',
    '123E4567-E89B-12D3-A456-426614174000',
    '123e4567-e89b-12d3-a456-42661417400',
  ],
  '{p:hex}': ['ff', 'DEADbeef', '0', 'fg', '\u0010'],
  '{p:slug}': ['hello-world', 'a', 'a--b', '-a', 'Hello', 'a1-b2'],
  '{p:[A-Z]{3}}': ['ABC', 'AB', 'ABCD', 'abc'],
  '{p:[a-z]+\\.txt}': ['a.txt', 'ab.txt', '.txt', 'a.txtx'],
  '{p:[^x]+}': ['abc', 'axb', 'a%2Fb', 'q'],
  '{p:a|ab}': ['a', 'ab', 'abb', 'b'],
}

/** A path that the pattern would match, with random values (valid or not) for its parameters. */
function instantiate(g: Gen, pattern: string): string {
  const out = pattern.split('/').flatMap((segment) => {
    if (!segment.startsWith('{')) return [segment]
    if (segment.includes('?}')) return g.chance(0.5) ? [] : [g.pick(VALUES['{p}']!)]
    if (segment.startsWith('{rest:'))
      return g.chance(0.3) ? [] : [g.pick(['', 'a', 'a/b', 'x%20y/z', '%ZZ'])]
    const form = segment.replace(/^\{p\d+/, '{p')
    return [g.pick(VALUES[form] ?? VALUES['{p}']!)]
  })
  return out.join('/') || '/'
}

function mutate(g: Gen, path: string): string {
  const parts = path.split('/')
  switch (g.int(8)) {
    case 0:
      return path + '/'
    case 1:
      return parts.slice(0, -1).join('/') || '/'
    case 2:
      return path + '/' + g.pick(WORDS)
    case 3:
      parts[1 + g.int(Math.max(1, parts.length - 1))] = g.pick([...WORDS, '', '%41'])
      return parts.join('/')
    case 4:
      return path.replace(/\/$/, '') + '//'
    case 5:
      return path.toUpperCase()
    case 6:
      return escapeSome(g, path)
    default:
      return g.pick(['', '*', 'users', '/%', '/' + 'a/'.repeat(g.int(6))])
  }
}

/** Percent-encodes a few characters (any hex case) and lowercases some escapes: an equivalent URL. */
function escapeSome(g: Gen, path: string): string {
  const hex = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, '0')
  return path.replace(/%[0-9A-F]{2}|[^/%]/g, (token) => {
    if (!g.chance(0.25)) return token
    if (token.startsWith('%')) return token.toLowerCase()
    const code = hex(token)
    return `%${g.chance(0.5) ? code.toUpperCase() : code}`
  })
}

function lookups(g: Gen, records: RouteRecord[]): { method: string; path: string; host: string }[] {
  const list = []
  for (let i = 0; i < LOOKUPS_PER_TABLE; i++) {
    const base = g.pick(records)
    let path = instantiate(g, base.path)
    if (g.chance(0.35)) path = mutate(g, path)
    if (g.chance(0.1))
      path = '/' + Array.from({ length: 1 + g.int(4) }, () => g.pick(WORDS)).join('/')
    const host = g.pick([
      '',
      'localhost:3000',
      'acme.ex.com',
      'API.ex.com.',
      'api.ex.com:8080',
      'a.b.ex.com',
    ])
    const method = g.chance(0.85) ? base.method : g.pick([...METHODS, 'FOO'])
    list.push({ method, path, host })
  }
  return list
}

afterAll(cleanupTempDirs)

describe('compiled matcher vs reference matcher', () => {
  it(`agrees on ${TABLES * LOOKUPS_PER_TABLE} lookups over ${TABLES} seeded random route tables`, async () => {
    let compared = 0
    const outcomes: Record<string, number> = { hit: 0, '400': 0, '404': 0, '405': 0 }
    for (let seed = 1; seed <= TABLES; seed++) {
      const g = new Gen(mulberry32(seed))
      const records = randomTable(g)
      const reference = new ReferenceMatcher(records)
      const compiled = await compileRoutes((r) =>
        register(
          r,
          records.map((x) => ({ method: x.method, path: x.path, host: x.host })),
        ),
      )
      for (const { method, path, host } of lookups(g, records)) {
        const expected = reference.match(method, path, host)
        const actual = compiled.match(method, path, host)
        const got = asReferenceResult(actual)
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          const table = records.map((x) => `${x.method} ${x.host ?? ''}${x.path}`).join('\n  ')
          expect.fail(
            `seed ${seed}: ${method} ${host} ${path}\n  routes:\n  ${table}\n  expected ${JSON.stringify(expected)}\n  got      ${JSON.stringify(got)}`,
          )
        }
        compared++
        outcomes['route' in expected ? 'hit' : String(expected.status)]!++
      }
    }
    expect(compared).toBe(TABLES * LOOKUPS_PER_TABLE)
    // The workload must exercise every outcome, or agreement would prove little.
    expect(outcomes.hit! / compared).toBeGreaterThan(0.3)
    expect(outcomes['404']! / compared).toBeGreaterThan(0.05)
    expect(outcomes['405']).toBeGreaterThan(100)
    expect(outcomes['400']).toBeGreaterThan(100)
  }, 300_000)
})
