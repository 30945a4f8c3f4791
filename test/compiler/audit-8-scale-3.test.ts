/**
 * Large route tables of two more shapes: hundreds of domain groups, and non-ASCII or
 * percent-encoded literals. Hosts without parameters were each a regex tested in turn by every
 * lookup (300 before any hostless route); many first segments made one trie function in
 * index.mjs too large for V8 to optimise, and long encoded static paths one shard function.
 * Structure is asserted, not timings (project rule); the reference matcher checks the answers.
 */
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter, type BuildOutput } from '../../src/compiler/build.js'
import { writeCache } from '../../src/compiler/write-cache.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import type { RouteRecord } from '../../src/shared/route-record.js'
import { cleanupTempDirs, noop, tempDir, type CompiledModule } from '../support/compile.js'
import { expectAgreement, FUNCTION_MAX, functionSizes } from '../support/generated-code.js'
import { ReferenceMatcher } from '../support/reference-matcher.js'

afterAll(cleanupTempDirs)

/** Builds once, writes the cache and imports it (compileRoutes would build a second time). */
async function compile(
  register: (r: Registrar) => void,
): Promise<{ output: BuildOutput; routes: RouteRecord[]; compiled: CompiledModule }> {
  const { routes } = collectRoutes(register)
  const output = buildRouter(routes)
  const dir = join(tempDir(), 'cache')
  await writeCache(dir, output)
  const compiled = (await import(
    pathToFileURL(join(dir, output.generation, 'index.mjs')).href
  )) as CompiledModule
  return { output, routes, compiled }
}

function largestFunction(output: BuildOutput): { file: string; name: string; size: number } {
  let largest = { file: '', name: '', size: 0 }
  for (const [file, code] of output.files) {
    if (!file.endsWith('.mjs') || file === 'routes.mjs') continue
    for (const f of functionSizes(code)) if (f.size > largest.size) largest = { file, ...f }
  }
  return largest
}

/** The text of a top-level function of index.mjs. */
function topFunction(code: string, name: string): string {
  const start = code.indexOf(`\nfunction ${name}(`)
  return code.slice(start, code.indexOf('\n}\n', start) + 3)
}

const VALUES: Record<string, string | number> = {
  id: 12,
  tenant: 'acme',
  region: 'eu',
  zone: 'z',
  x: 'a b',
  t: 'a%b',
  name: 'é',
}

/** urlFor's params of a route: a value for each parameter of its host and path. */
function paramsOf(route: RouteRecord): Record<string, string | number> {
  const names = `${route.host ?? ''}${route.path}`.match(/(?<=\{)\w+/g) ?? []
  return Object.fromEntries(names.map((name) => [name, VALUES[name]!]))
}

describe('hundreds of domain groups', () => {
  const SHOPS = 300
  const register = (r: Registrar): void => {
    for (let i = 0; i < SHOPS; i++)
      r.group({ domain: `shop${i}.example.com` }, (r) => {
        r.get('/', noop, `shop${i}.home`)
        r.get('/items/{id:int}', noop, `shop${i}.item`)
        if (i % 3 === 0) r.post('/cart', noop)
      })
    // Sorts right after shop5.example.com: splits the hosts without parameters in two runs.
    r.group({ domain: 'shop5.{zone}.com' }, (r) => r.get('/items/{id}', noop, 'zone.item'))
    r.group({ domain: '{tenant}.example.com' }, (r) => {
      r.get('/', noop, 'tenant.home')
      r.get('/users/{id}', noop, 'tenant.user')
      r.delete('/users/{id}', noop)
    })
    r.group({ domain: 'api.{region}.example.com' }, (r) => {
      r.get('/v1/{x}', noop, 'api.x')
      r.put('/v1/{x}', noop)
    })
    r.group({ domain: '{id:int}.ids.example.com' }, (r) => r.get('/p', noop, 'ids.p'))
    r.get('/', noop, 'home')
    r.get('/about', noop, 'about')
    r.get('/users/{id:int}', noop, 'users.show')
    r.post('/users', noop)
  }
  let built: Awaited<ReturnType<typeof compile>>
  const setup = async (): Promise<typeof built> => (built ??= await compile(register))

  it('finds a host without parameters by one lookup (was a regex per host, 300 in a row)', async () => {
    const { output } = await setup()
    const index = output.files.get('index.mjs')!
    for (const method of ['GET', 'POST', 'DELETE', 'PUT']) {
      const fn = topFunction(index, method)
      // api.{region}, shop5.{zone}, {id:int}.ids, {tenant}: the only regexes left.
      expect(fn.match(/HOST\.exec\(host\)/g)?.length ?? 0, method).toBeLessThanOrEqual(4)
    }
    expect(topFunction(index, 'GET').match(/\.get\(host\)/g)).toHaveLength(2)
    const largest = largestFunction(output)
    expect(largest.size, `${largest.file}: ${largest.name}()`).toBeLessThan(FUNCTION_MAX)
  })

  it('agrees with the reference matcher on hits, near misses and adversarial hosts', async () => {
    const { routes, compiled } = await setup()
    const hosts = [
      ...['shop0', 'shop5', 'shop50', 'shop299', 'shop300', 'shop3'].map((s) => `${s}.example.com`),
      'SHOP7.Example.COM',
      'shop7.example.com.',
      'shop7.example.com:8080',
      'shop7.example.com:',
      'x.shop7.example.com',
      'shop7.example.com.evil',
      'shop7..example.com',
      'shop5.eu.com',
      'shop5.example.com.com',
      'acme.example.com',
      'api.eu.example.com',
      'api.eu.x.example.com',
      '42.ids.example.com',
      '007.ids.example.com',
      'x42.ids.example.com',
      '',
      'localhost:3000',
      'example.com',
      '.example.com',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      '[::1]:80',
      '%73hop7.example.com',
      'shop7.example.com\n',
      'a'.repeat(2000),
      'shop7.example.com:80:80',
    ]
    const paths = ['/', '/items/3', '/items/x', '/cart', '/users/7', '/users/x', '/v1/a', '/p']
    const lookups: [string, string, string][] = []
    for (const host of hosts)
      for (const path of [...paths, '/about', '/nope', '/items/3/'])
        for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'])
          lookups.push([method, path, host])
    const outcomes = expectAgreement(new ReferenceMatcher(routes), compiled, lookups)
    expect(outcomes.hit).toBeGreaterThan(250)
    expect(outcomes['404']).toBeGreaterThan(500)
    expect(outcomes['405']).toBeGreaterThan(100)
  })

  it('round-trips urlFor of domain routes', async () => {
    const { routes, compiled } = await setup()
    for (const route of routes) {
      if (route.name === null) continue
      const url = new URL(compiled.urlFor(route.name, paramsOf(route), {}, true))
      const hit = compiled.match('GET', url.pathname, url.host) as { route?: { id: number } }
      expect(hit.route?.id, url.href).toBe(route.id)
    }
  })
})

describe('many first segments, non-ASCII and percent-encoded literals', () => {
  const WORDS = ['café', 'über', '日本', '😀', 'e\u0301', 'naïve', 'Ωmega', 'a b', 'x+y', 'ß', '👍🏽']
  const encode = (word: string, lower: boolean): string =>
    encodeURIComponent(word).replace(/%[0-9A-F]{2}/g, (e) => (lower ? e.toLowerCase() : e))
  const LITERALS = Array.from({ length: 2000 }, (_, i) => `${WORDS[i % WORDS.length]}${i}`)
  /** 500 first segments, 500 static paths under /u, 1,000 with parameters around them. */
  const register = (r: Registrar): void => {
    LITERALS.forEach((literal, i) => {
      // Registered raw, encoded, or encoded with lowercase escapes (the same literal).
      const written = i % 3 === 0 ? literal : encode(literal, i % 3 === 2)
      const k = i % 4
      const path =
        k === 0
          ? `/${written}`
          : k === 1
            ? `/u/${written}`
            : k === 2
              ? `/u/${written}/{id:int}`
              : `/{t}/${written}/x`
      r.get(path, noop, `n${i}`)
    })
    r.get('/u/{name}', noop, 'u.name')
    r.post('/u/{name}/x', noop)
  }
  let built: Awaited<ReturnType<typeof compile>>
  const setup = async (): Promise<typeof built> => (built ??= await compile(register))

  it('splits the first-segment trie of 500 encoded names (was one function of ~230 K)', async () => {
    const { output } = await setup()
    expect(output.manifest.shards.length).toBeGreaterThan(500)
    const index = functionSizes(output.files.get('index.mjs')!).filter((f) => f.name !== 'load')
    const largest = index.reduce((a, b) => (b.size > a.size ? b : a))
    expect(largest.size, `index.mjs: ${largest.name}()`).toBeLessThan(FUNCTION_MAX)
  })

  it("bounds a shard's in-place static paths in characters (500 encoded ones made 70 K)", async () => {
    const { output } = await setup()
    const shard = functionSizes(output.files.get('u.mjs')!)
    const largest = shard.reduce((a, b) => (b.size > a.size ? b : a))
    expect(largest.size, `u.mjs: ${largest.name}()`).toBeLessThan(FUNCTION_MAX)
  })

  it('agrees with the reference matcher on raw, encoded and lowercase-escaped lookups', async () => {
    const { routes, compiled } = await setup()
    const lookups: [string, string][] = []
    LITERALS.forEach((literal, i) => {
      if (i % 13 !== 0) return
      const k = i % 4
      const forms = [
        literal,
        encode(literal, false),
        encode(literal, true),
        literal.normalize('NFC'),
      ]
      for (const form of [
        ...forms,
        `${encode(literal, false)}z`,
        encode(literal, false).slice(0, -1),
      ]) {
        const path =
          k === 0
            ? `/${form}`
            : k === 1
              ? `/u/${form}`
              : k === 2
                ? `/u/${form}/12`
                : `/acme/${form}/x`
        lookups.push(['GET', path], ['POST', `${path}/x`])
      }
    })
    for (const path of ['/u/%ZZ', '/u/%C3', '/%C3%A9%zz', '/%E6%97', '/u/%F0%9F%98%80', '/%'])
      lookups.push(['GET', path], ['GET', `${path}/x`])
    const outcomes = expectAgreement(new ReferenceMatcher(routes), compiled, lookups)
    expect(outcomes.hit).toBeGreaterThan(500)
    expect(outcomes['404']).toBeGreaterThan(500)
    expect(outcomes['405']).toBeGreaterThan(0)
    expect(outcomes['400']).toBeGreaterThan(0)
  })

  it('round-trips urlFor of every literal', async () => {
    const { routes, compiled } = await setup()
    for (const route of routes) {
      if (route.name === null) continue
      const url = compiled.urlFor(route.name, paramsOf(route))
      const hit = compiled.match('GET', url) as { route?: { id: number } }
      expect(hit.route?.id, url).toBe(route.id)
    }
  })
})

describe('many first segments, no route starting with a parameter', () => {
  // No dynamic shard: a miss in a bucket is settled there (404/405 without the any-method walk),
  // also from the trie's split-off parts.
  const register = (r: Registrar): void => {
    for (let i = 0; i < 400; i++) {
      const name = i % 2 === 0 ? `p${i}` : `%C3%A9t%C3%A9${i}`
      r.get(`/${name}`, noop)
      if (i % 3 === 0) r.post(`/${name}/{x}`, noop)
      if (i % 5 === 0) r.get(`/${name}/{id:int}`, noop)
    }
  }

  it('splits the trie and agrees with the reference matcher', async () => {
    const { output, routes, compiled } = await compile(register)
    const index = functionSizes(output.files.get('index.mjs')!).filter((f) => f.name !== 'load')
    expect(index.filter((f) => /^g0GETB\d+$/.test(f.name)).length).toBeGreaterThan(0)
    expect(topFunction(output.files.get('index.mjs')!, 'g0GETB0')).toContain('settled(path)')
    expect(Math.max(...index.map((f) => f.size))).toBeLessThan(FUNCTION_MAX)
    const lookups: [string, string][] = []
    for (let i = 0; i < 400; i += 3) {
      const name = i % 2 === 0 ? `p${i}` : `%c3%a9t%C3%A9${i}`
      for (const path of [`/${name}`, `/${name}/7`, `/${name}/x`, `/${name}/%41`, `/${name}x`])
        for (const method of ['GET', 'POST', 'PUT']) lookups.push([method, path])
    }
    const outcomes = expectAgreement(new ReferenceMatcher(routes), compiled, lookups)
    expect(outcomes.hit).toBeGreaterThan(100)
    expect(outcomes['405']).toBeGreaterThan(100)
    expect(outcomes['404']).toBeGreaterThan(100)
  })
})
