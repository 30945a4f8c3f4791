/**
 * Large but legal route tables: thousands of routes under one first segment (one shard) and
 * hundreds whose first segment is a parameter (`__dynamic`, consulted on every lookup). V8
 * optimises no function of more than ~60 KB of bytecode, so the generator must split a shard's
 * walk and static paths into functions of bounded size; the split must keep the precedence.
 * Structure is asserted, not timings (project rule).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter } from '../../src/compiler/build.js'
import { buildMethodTables } from '../../src/compiler/trie.js'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'
import {
  expectAgreement,
  FUNCTION_MAX,
  functionSizes,
  nearMiss,
  type Lookup,
} from '../support/generated-code.js'
import { ReferenceMatcher } from '../support/reference-matcher.js'
import { Gen, mulberry32 } from '../support/seeded-random.js'

afterAll(cleanupTempDirs)

const WORDS = ['users', 'posts', 'edit', 'show', 'a', 'b', 'comments', 'files']

/** ~2,700 routes under /api and ~400 under /{tenant}, of every common shape. */
function register(r: Registrar): void {
  for (let i = 0; i < 1400; i++) r.get(`/api/res${i}`, noop, `s${i}`)
  for (let i = 0; i < 1300; i++) {
    const k = i % 4
    const path =
      k === 0
        ? `/api/res${i % 300}/{id:int}/sub${i}`
        : k === 1
          ? `/api/v${i % 13}/${WORDS[i % WORDS.length]}${i}/{slug}`
          : k === 2
            ? `/api/group${i % 50}/{a}/{b:[a-z]+}/leaf${i}`
            : `/api/deep${i % 31}/x${i}/{id:uuid}/{rest:.*}`
    r.get(path, noop, `d${i}`)
  }
  r.post('/api/res7/{id:int}/sub7', noop)
  for (let i = 0; i < 400; i++) {
    const k = i % 3
    const path =
      k === 0
        ? `/{tenant}/t${i}`
        : k === 1
          ? `/{tenant}/t${i % 90}/{id:int}/u${i}`
          : `/{tenant}/g${i % 20}/{x}/l${i}/{opt?}`
    r.get(path, noop, `t${i}`)
  }
}

describe('route tables of thousands of routes under one first segment', () => {
  it('splits every shard function below what V8 optimises (was one function of megabytes)', () => {
    const registrar = collectRoutes(register)
    const output = buildRouter(registrar.routes)
    const shards = output.manifest.shards.map((s) => s.file)
    expect(shards).toEqual(['api.mjs', '__dynamic.mjs'])
    for (const file of shards) {
      const sizes = functionSizes(output.files.get(file)!)
      expect(sizes.some((f) => f.name === 'GET')).toBe(true)
      const largest = sizes.reduce((a, b) => (b.size > a.size ? b : a))
      expect(largest.size, `${file}: ${largest.name}()`).toBeLessThan(FUNCTION_MAX)
    }
  })

  it('agrees with the reference matcher on hits, near misses and adversarial paths', async () => {
    const registrar = collectRoutes(register)
    const reference = new ReferenceMatcher(registrar.routes)
    const compiled = await compileRoutes(register)
    const g = new Gen(mulberry32(8))
    const values = ['42', 'abc', '123e4567-e89b-12d3-a456-426614174000', 'x%2Fy', '', '%C3%A9', '7']
    const fill = (path: string): string =>
      path
        .replace(/\{[^}]*\.\*\}/g, () => g.pick(['', 'a', 'a/b/c']))
        .replace(/\{[^}]*\}/g, () => g.pick(values))
        .replace(/\/\/+/g, '/')
    const paths: string[] = []
    for (let i = 0; i < 300; i++) {
      const route = g.pick(registrar.routes)
      // Near misses: a changed character, a segment more or less, a trailing slash.
      paths.push(nearMiss(g, fill(route.path), ['/x', '/', '/1'], ['z', '9', '/', '%41']))
    }
    const lookups = paths.flatMap((path): Lookup[] => [
      ['GET', path],
      ['POST', path],
    ])
    expectAgreement(reference, compiled, lookups)
  })
})

describe('building a node of thousands of children', () => {
  it('keeps the children in precedence order when they arrive out of order', () => {
    // Variants come sorted, so the trie appends; an index lookup replaced a search per insert.
    const registrar = collectRoutes((r) => {
      for (let i = 0; i < 50; i++) r.get(`/api/r${49 - i}/{id}`, noop)
      r.get('/api/{x:int}/{id}', noop)
      r.get('/api/{x}/{id}', noop)
    })
    const table = analyzeRoutes(registrar.routes, new Set())
    const [get] = buildMethodTables(table.routes)
    const api = get!.root.children[0]!
    const keys = api.children.map((c) => c.key!)
    const sorted = [...keys].sort(
      (a, b) => a.rank - b.rank || a.order - b.order || (a.literal < b.literal ? -1 : 1),
    )
    expect(keys).toEqual(sorted)
    expect(api.children).toHaveLength(52)
  })
})
