/**
 * Any string works as a route or parameter name, `__proto__` included. Regression: a route named
 * `__proto__` was emitted as `"__proto__": [...]` next to `__proto__: null` in __names.mjs, which
 * does not load ("Duplicate __proto__ fields"), so every urlFor call threw; a parameter named
 * `__proto__` set the prototype of the params object instead of a value.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MANIFEST_FILE } from '../../src/shared/cache-format.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

let m: CompiledModule
beforeAll(async () => {
  m = await compileRoutes((r) => {
    r.get('/a', noop, '__proto__')
    r.get('/b', noop, 'b')
    r.get('/c', noop, 'constructor')
    r.get('/e/{__proto__}', noop, 'e')
    r.get('/o/{__proto__?}', noop, 'o')
    r.get('/f/{__proto__:.*}', noop, 'f')
    r.group({ domain: '{__proto__}.example.com' }, (r) => r.get('/h', noop, 'h'))
  })
})

/** The own properties of a match's params (a `__proto__` key must be one of them). */
function ownParams(path: string, host?: string): Record<string, unknown> {
  const result = m.match('GET', path, host)
  if (!('route' in result)) throw new Error(`${path} did not match: ${JSON.stringify(result)}`)
  return Object.fromEntries(Object.keys(result.params).map((k) => [k, result.params[k]]))
}

const withProto = (value: unknown): Record<string, unknown> =>
  Object.defineProperty({}, '__proto__', { value, enumerable: true })

describe('a route named __proto__', () => {
  it('leaves urlFor working for every route', () => {
    expect(m.urlFor('b')).toBe('/b')
    expect(m.urlFor('constructor')).toBe('/c')
    expect(m.urlFor('__proto__')).toBe('/a')
  })

  it('is emitted as a computed key, an own property of the names table', () => {
    const names = readFileSync(join(m.dir, generationOf(m.dir), '__names.mjs'), 'utf8')
    expect(names).toContain('["__proto__"]: [null, ["/a"]]')
  })
})

describe('a parameter named __proto__', () => {
  it('is an own property of the params of a match', () => {
    expect(ownParams('/e/x')).toEqual(withProto('x'))
    expect(ownParams('/o')).toEqual(withProto(null))
    expect(ownParams('/o/y')).toEqual(withProto('y'))
    expect(ownParams('/f/p/q')).toEqual(withProto('p/q'))
    expect(ownParams('/f')).toEqual(withProto(''))
    expect(ownParams('/h', 'acme.example.com')).toEqual(withProto('acme'))
  })

  it('is filled by urlFor', () => {
    expect(m.urlFor('e', withProto('x'))).toBe('/e/x')
    expect(m.urlFor('o', withProto('y'))).toBe('/o/y')
    expect(m.urlFor('o')).toBe('/o')
    expect(m.urlFor('h', withProto('acme'), {}, 'http://localhost')).toBe(
      'http://acme.example.com/h',
    )
  })
})

function generationOf(dir: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as {
    generation: string
  }
  return manifest.generation
}
