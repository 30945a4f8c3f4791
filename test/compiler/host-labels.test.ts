/**
 * Domain routes match the Host header clients send. Regressions: a unicode domain
 * (`café.example`) never matched, since clients send its punycode form (`xn--caf-dma.example`);
 * urlFor tested a host parameter's constraint on the value as given, though the URL (and the
 * Host match() sees) holds it lowercased.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

let m: CompiledModule
beforeAll(async () => {
  m = await compileRoutes((r) => {
    r.group({ domain: 'café.example' }, (r) => r.get('/x', noop, 'idn'))
    r.group({ domain: '{shop}.bücher.example' }, (r) => r.get('/y', noop, 'shop'))
    r.group({ domain: '{sub:[a-z]+}.example.com' }, (r) => r.get('/z', noop, 'sub'))
  })
})

const nameOf = (path: string, host: string): unknown => {
  const result = m.match('GET', path, host)
  return 'route' in result ? result.route.name : result
}

describe('an internationalised domain', () => {
  it('matches the punycode Host header clients send, in any case and with a port', () => {
    expect(nameOf('/x', 'xn--caf-dma.example')).toBe('idn')
    expect(nameOf('/x', 'XN--CAF-DMA.Example:8080')).toBe('idn')
    expect(m.match('GET', '/y', 'acme.xn--bcher-kva.example')).toMatchObject({
      route: { name: 'shop' },
      params: { shop: 'acme' },
    })
  })

  it('gives urlFor a host a URL can hold', () => {
    expect(m.urlFor('idn', {}, {}, 'https://localhost')).toBe('https://xn--caf-dma.example/x')
    expect(m.urlFor('shop', { shop: 'acme' }, {}, 'https://localhost')).toBe(
      'https://acme.xn--bcher-kva.example/y',
    )
  })

  it('is refused at build time when it is not a valid domain label', () => {
    const registrar = collectRoutes((r) =>
      r.group({ domain: 'a\uFFFF.example' }, (r) => r.get('/', noop)),
    )
    let caught: unknown
    try {
      analyzeRoutes(registrar.routes, new Set())
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(FwError)
    expect((caught as FwError).code).toBe('FW_PATTERN_INVALID')
    expect((caught as FwError).message).toContain('not a valid internationalised domain label')
  })
})

describe('a host parameter with a constraint', () => {
  it('is tested lowercased, as match() sees it', () => {
    expect(m.urlFor('sub', { sub: 'ACME' }, {}, 'http://localhost')).toBe(
      'http://acme.example.com/z',
    )
    expect(nameOf('/z', 'ACME.example.com')).toBe('sub')
    expect(() => m.urlFor('sub', { sub: 'a1' }, {}, 'http://localhost')).toThrow(/does not match/)
  })
})
