/**
 * Seeded differential fuzz of the generated matcher and URL generator. Each seed makes a random
 * but valid route set (every parameter type, optional tails, catch-alls, all methods, domain
 * routes, shared prefixes, enough first segments for several shards and `__dynamic`), compiles it
 * with the real compiler and compares, over hits, near-misses and adversarial paths, the compiled
 * `match()` with the reference matcher; then every named route goes through `urlFor()` and back.
 * A failure prints the seed, the route set and the request, so it reproduces from the message.
 * FW_FUZZ_SEEDS=400 runs more sets (a longer run for local use); FW_FUZZ_SEED=n runs only seed n.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { buildMethodTables } from '../../src/compiler/trie.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import type { Manifest } from '../../src/shared/cache-format.js'
import { FwError } from '../../src/shared/errors.js'
import { parseHost, parsePath, type ParamSegment, type Segment } from '../../src/shared/pattern.js'
import type { RouteRecord } from '../../src/shared/route-record.js'
import { cleanupTempDirs, compileRoutes, noop, type CompiledModule } from '../support/compile.js'
import { ReferenceMatcher, type ReferenceResult } from '../support/reference-matcher.js'
import { Gen, mulberry32 } from '../support/seeded-random.js'

const SETS = Number(process.env.FW_FUZZ_SEEDS ?? '40')
const ONLY = process.env.FW_FUZZ_SEED ? Number(process.env.FW_FUZZ_SEED) : null
const PATHS_PER_SET = 400
const ROUND_TRIPS_PER_SET = 250
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']
// Shared prefixes ('use'/'user'/'users', 'a'/'api'/'app') exercise the shard trie's branching.
// Literals longer than 12 and 32 characters take other branches of the static switch and walk.
const LONG = ['organizations', 'organisation', 'a-literal-segment-longer-than-32-chars']
const FIRST = [
  'users',
  'user',
  'use',
  'api',
  'app',
  'a',
  'files',
  'f',
  'café',
  'x-y',
  'v1',
  'ab',
  ...LONG,
]
const WORDS = [
  'a',
  'b',
  'posts',
  'post',
  'p',
  'edit',
  'new',
  'v2',
  'café',
  '😀',
  'A',
  '1',
  'x.y',
  ...LONG,
]
const HOSTS = [
  '{account}.example.com',
  'admin.example.com',
  '{account}.{region}.example.com',
  '{n:int}.example.com',
  '{tenant:[a-z]+}.example.com',
]
const REQUEST_HOSTS = [
  '',
  'localhost:3000',
  'acme.example.com',
  'ACME.Example.com:8080',
  'admin.example.com.',
  'acme.eu.example.com',
  'example.com',
  'a.b.c.example.com',
  '[::1]:3000',
  '42.example.com',
  'Acme-1.example.com',
]

type Form = keyof typeof VALID

interface Spec {
  method: string
  path: string
  host: string | null
  name: string | null
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz'
const DIGITS = '0123456789'
const HEX = '0123456789abcdefABCDEF'

/** Values each parameter form accepts, as they appear in a request path (encoded). */
const VALID = {
  '{p}': (g: Gen) => g.pick([g.text(LOWER + 'XY-._~!$&()*+,;=:@', 1, 8), ...ENCODED_VALUES]),
  '{p:int}': (g: Gen) => g.text(DIGITS, 1, g.chance(0.2) ? 15 : 6),
  '{p:slug}': (g: Gen) => [g.text(LOWER + DIGITS, 1, 5), g.text(LOWER, 1, 4)].join('-'),
  '{p:uuid}': (g: Gen) => [8, 4, 4, 4, 12].map((n) => g.text(HEX, n, n)).join('-'),
  '{p:hex}': (g: Gen) => g.text(HEX, 1, 12),
  '{p:[A-Z]{3}}': (g: Gen) => g.text('ABCXYZ', 3, 3),
  '{p:\\d{4}}': (g: Gen) => g.text(DIGITS, 4, 4),
  '{p:[a-z]+\\.txt}': (g: Gen) => g.text(LOWER, 1, 6) + '.txt',
  '{p:en|fr|de}': (g: Gen) => g.pick(['en', 'fr', 'de']),
  '{p:v[0-9]+}': (g: Gen) => 'v' + g.text(DIGITS, 1, 3),
  '{p:[a-z]{2,4}}': (g: Gen) => g.text(LOWER, 2, 4),
  '{p:[^x]+}': (g: Gen) => g.text('aby-.~', 1, 5) + g.pick(['', '%2F', '%20', '%C3%A9']),
  '{p:a|ab}': (g: Gen) => g.pick(['a', 'ab']),
  // Lookbehind and \b see the path around the segment: tested in place, as a sticky regex.
  '{p:(?<=/)ab}': () => 'ab',
  '{p:\\bcd\\b}': () => 'cd',
  // ... and so do these, which could match a '/' (tested on the path through the next '/'),
  '{p:(?<=/)[^x]+}': (g: Gen) => g.text('aby-', 1, 4),
  '{p:[^x]*\\bcd}': (g: Gen) => g.pick(['', '-', '.', 'a-']) + 'cd',
  // where '$' is still the path's end: 'ab' matches only in a path's last segment.
  '{p:(?:[^x]b$)|c}': (g: Gen) => g.pick(['ab', 'c']),
}
const ENCODED_VALUES = ['x%2Fy', 'caf%C3%A9', '%F0%9F%98%80', 'a%20b', '%25', 'A%42c', '42', '..']

/** Values that are one step outside a form (or inside it, spelled unusually). */
const EDGE_VALUES = [
  '007',
  '0000000000000001',
  '1234567890123456',
  '123456789012345',
  '-1',
  '+1',
  '1e3',
  '123E4567-E89B-12D3-A456-426614174000',
  '123e4567e89b12d3a456426614174000',
  'fg',
  'A-b',
  'a--b',
  '-a',
  'ab',
  'ABCD',
  '12345',
  '.txt',
  'a.TXT',
  'EN',
  'v',
  '%',
  '%zz',
  '%E0%A4%A',
  '%2e%2e',
  'é',
  'a'.repeat(300),
  '9'.repeat(40),
]

const FORMS = Object.keys(VALID) as Form[]

/** The shape of a route set: which branches of the generated code it makes the matcher take. */
interface Profile {
  name: string
  routes: [min: number, max: number]
  /** Static GET paths registered first (distinct, so the build takes them without checks). */
  statics: number
  /** Chance of a domain route. */
  hosts: number
  /** Chance that a path starts with a parameter (`__dynamic.mjs`, consulted on every lookup). */
  dynamicFirst: number
  /** Chance that a later segment is literal. */
  literal: number
}

const PROFILES: Profile[] = [
  { name: 'mixed', routes: [25, 70], statics: 0, hosts: 0.12, dynamicFirst: 0.1, literal: 0.45 },
  // Most APIs: no domain routes, every path starts with a literal; the matcher then answers some
  // misses from one shard's any-method walk.
  { name: 'api', routes: [25, 70], statics: 0, hosts: 0, dynamicFirst: 0, literal: 0.45 },
  { name: 'hostless', routes: [25, 70], statics: 0, hosts: 0, dynamicFirst: 0.1, literal: 0.3 },
  // Over 256 static paths for one method: static paths move from index.mjs into the shards.
  { name: 'wide', routes: [20, 40], statics: 280, hosts: 0.05, dynamicFirst: 0.1, literal: 0.5 },
]

function randomSegments(g: Gen, profile: Profile, index: number): string[] {
  const segments: string[] = []
  const depth = 1 + g.int(4)
  for (let i = 0; i < depth; i++) {
    if (i === 0 && !g.chance(profile.dynamicFirst)) segments.push(g.pick(FIRST))
    else if (g.chance(profile.literal)) segments.push(g.pick(WORDS))
    else segments.push(g.pick(FORMS).replace('{p', `{p${index}_${i}`))
  }
  return segments
}

/** A random route; `catchAll` ones end in a catch-all. */
function randomSpec(g: Gen, profile: Profile, index: number, catchAll: boolean): Spec {
  let segments = randomSegments(g, profile, index)
  if (catchAll) {
    if (g.chance(profile.dynamicFirst * 3)) segments = []
    segments.push(`{rest${index}:${g.pick(['.*', '.+'])}}`)
  } else segments.push(...optionalTail(g, index))
  const host = g.chance(profile.hosts) ? g.pick(HOSTS) : null
  // A trailing '/' in a pattern is the same route as without it.
  const tail = !catchAll && g.chance(0.05) ? '/' : ''
  const path = !catchAll && g.chance(0.03) ? '/' : '/' + segments.join('/') + tail
  const name = g.chance(0.75) ? `r${index}` : null
  return { method: g.pick(METHODS), path, host, name }
}

/** None, one or two optional trailing parameters, now and then typed (`{o?:int}`). */
function optionalTail(g: Gen, index: number): string[] {
  const count = g.chance(0.15) ? (g.chance(0.25) ? 2 : 1) : 0
  return Array.from({ length: count }, (_, k) => {
    const type = g.chance(0.3) ? g.pick([':int', ':slug', ':[A-Z]{3}']) : ''
    return `{opt${index}_${k}?${type}}`
  })
}

function register(r: Registrar, specs: readonly Spec[]): void {
  for (const spec of specs) {
    const verb = spec.method.toLowerCase() as 'get'
    if (spec.host) r.group({ domain: spec.host }, (r) => r[verb](spec.path, noop, spec.name))
    else r[verb](spec.path, noop, spec.name)
  }
}

/** Whether the build accepts the set; it refuses shadowed and duplicate routes with a code. */
function accepts(specs: readonly Spec[]): boolean {
  try {
    analyzeRoutes(collectRoutes((r) => register(r, specs)).routes, new Set())
    return true
  } catch (error) {
    if (error instanceof FwError) return false
    throw error
  }
}

/** A random valid route set: routes the build refuses are left out, one at a time. */
function randomSet(g: Gen, profile: Profile): Spec[] {
  const specs: Spec[] = staticSpecs(g, profile.statics)
  const [min, max] = profile.routes
  const count = min + g.int(max - min + 1)
  for (let i = 0; i < count + 1 + g.int(4); i++) {
    // Catch-alls come last, but now and then one in the middle: the build refuses the routes
    // after it that it covers (FW_CATCHALL_NOT_LAST), and keeps the others.
    const candidate = randomSpec(g, profile, i, i >= count || g.chance(0.03))
    if (accepts([...specs, candidate])) specs.push(candidate)
  }
  return specs
}

function staticSpecs(g: Gen, count: number): Spec[] {
  const paths = new Set<string>()
  while (paths.size < count) {
    const rest = Array.from({ length: g.int(3) }, () => '/' + g.pick(WORDS)).join('')
    paths.add(`/${g.pick(FIRST)}${rest}`)
  }
  return [...paths].map((path, i) => ({ method: 'GET', path, host: null, name: `s${i}` }))
}

/** A request path the pattern matches, with random valid values (and now and then edge ones). */
function instantiate(g: Gen, pattern: string): string {
  const parts = segmentsOf(pattern).flatMap((s) => {
    if (s.kind === 'static') return [g.chance(0.05) ? encodeSome(g, s.value) : s.value]
    if (s.optional && g.chance(0.4)) return []
    if (s.type === 'catchall') return [catchAllValue(g, !s.allowEmpty)]
    if (g.chance(0.08)) return [g.pick(EDGE_VALUES)]
    return [VALID[formOf(s)](g)]
  })
  return '/' + parts.join('/')
}

const parsed = new Map<string, Segment[]>()

/** parsePath, once per pattern (custom regexes are checked for safety when parsed). */
function segmentsOf(pattern: string): Segment[] {
  let segments = parsed.get(pattern)
  if (segments === undefined) parsed.set(pattern, (segments = parsePath(pattern)))
  return segments
}

function formOf(s: ParamSegment): Form {
  return (s.type === 'string' ? '{p}' : `{p:${s.type === 'regex' ? s.regex : s.type}}`) as Form
}

function catchAllValue(g: Gen, nonEmpty: boolean): string {
  const count = (nonEmpty ? 1 : 0) + g.int(4)
  return Array.from({ length: count }, () => g.pick([...WORDS, ...ENCODED_VALUES, ''])).join('/')
}

/** Equivalent spelling: a few characters percent-encoded, any hex case. */
function encodeSome(g: Gen, text: string): string {
  return text.replace(/[^/%]/g, (c) => {
    if (!g.chance(0.3) || c.charCodeAt(0) > 0x7f) return c
    const hex = c.charCodeAt(0).toString(16).padStart(2, '0')
    return '%' + (g.chance(0.5) ? hex.toUpperCase() : hex)
  })
}

const MUTATIONS: ((g: Gen, path: string) => string)[] = [
  (g, path) => replaceChar(g, path, g.pick([...'aZ0/%-.é_']) + (g.chance(0.3) ? 'x' : '')),
  (_, path) => path.replace(/\/[^/]*$/, '') || '/',
  (g, path) => path.replace(/\/$/, '') + '/' + g.pick([...WORDS, ...EDGE_VALUES]),
  (_, path) => path + '/',
  (g, path) => replaceChar(g, path, '//'),
  (_, path) => path.replace(/\/$/, '') + '//',
  (g, path) => encodeSome(g, path),
  (g, path) => replaceChar(g, path, g.pick(['%', '%2F', '%2f', '%G1', '%C3%A9', 'é', '😀'])),
  (g, path) => replaceSegment(g, path, g.pick(EDGE_VALUES)),
  (g, path) => replaceSegment(g, path, ''),
  (_, path) => path.toUpperCase(),
  (g) => g.pick(['', '*', 'users', '/', '//', '/%', '/%2F', '/users/', '/users//', '///a']),
]

function replaceChar(g: Gen, path: string, by: string): string {
  const i = 1 + g.int(Math.max(1, path.length - 1))
  return path.slice(0, i) + by + path.slice(i + 1)
}

function replaceSegment(g: Gen, path: string, by: string): string {
  const parts = path.split('/')
  parts[1 + g.int(Math.max(1, parts.length - 1))] = by
  return parts.join('/')
}

interface Request {
  method: string
  path: string
  host: string
}

function randomRequest(g: Gen, specs: readonly Spec[]): Request {
  const spec = g.pick(specs)
  let path = instantiate(g, spec.path)
  if (g.chance(0.4)) path = g.pick(MUTATIONS)(g, path)
  const method = g.chance(0.8) ? spec.method : g.pick([...METHODS, 'HEAD', 'OPTIONS', 'FOO', 'get'])
  return { method, path, host: g.pick(REQUEST_HOSTS) }
}

/** The compiled result in the reference's shape: route id and params, or status and allow. */
function compiledOutcome(
  m: CompiledModule,
  method: string,
  path: string,
  host: string,
): ReferenceResult {
  let result
  try {
    result = m.match(method, path, host)
  } catch (error) {
    // match() answers every request; a throw is a failure the caller prints with the request.
    return { status: -1, allow: [String(error)] }
  }
  if (!('route' in result)) return result
  return { route: result.route.id, params: { ...result.params } }
}

/** JSON with sorted keys, so that two equal results print alike. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  )
}

function describeSet(seed: number, specs: readonly Spec[]): string {
  const lines = specs.map(
    (s, i) => `${i} ${s.method} ${s.host ?? ''}${s.path}${s.name ? ` (${s.name})` : ''}`,
  )
  return `seed ${seed} (FW_FUZZ_SEED=${seed} reruns it), routes:\n  ${lines.join('\n  ')}`
}

interface Built {
  seed: number
  specs: Spec[]
  records: RouteRecord[]
  reference: ReferenceMatcher
  compiled: CompiledModule
  g: Gen
}

async function buildSet(seed: number): Promise<Built> {
  const g = new Gen(mulberry32(seed * 7919))
  const profile = PROFILES[seed % PROFILES.length]!
  const specs = randomSet(g, profile)
  const records = collectRoutes((r) => register(r, specs)).routes
  const compiled = await compileRoutes((r) => register(r, specs))
  noteLayout(compiled.dir, records)
  return { seed, specs, records, reference: new ReferenceMatcher(records), compiled, g }
}

/** What a build's layout exercises: shards, `__dynamic`, domain shards, statics in shards. */
function noteLayout(cacheDir: string, records: readonly RouteRecord[]): void {
  const table = analyzeRoutes(records, new Set())
  const tables = buildMethodTables(table.routes.filter((r) => r.record.host === null))
  if (tables.some((t) => t.statics.size > 256)) tally.setsWith256Statics++
  const manifest = JSON.parse(readFileSync(join(cacheDir, 'manifest.json'), 'utf8')) as Manifest
  const files = manifest.shards.map((s) => s.file)
  tally.shards += files.length
  if (files.length >= 5) tally.setsWith5Shards++
  if (files.includes('__dynamic.mjs')) tally.setsWithDynamic++
  if (manifest.shards.some((s) => s.host !== null)) tally.setsWithDomains++
}

const tally = {
  sets: 0,
  routes: 0,
  shards: 0,
  setsWith5Shards: 0,
  setsWithDynamic: 0,
  setsWithDomains: 0,
  setsWith256Statics: 0,
  paths: 0,
  hit: 0,
  400: 0,
  404: 0,
  405: 0,
  urls: 0,
  refused: 0,
  sameRoute: 0,
}

function compareRequests(set: Built): void {
  for (let i = 0; i < PATHS_PER_SET; i++) {
    const { method, path, host } = randomRequest(set.g, set.specs)
    const expected = set.reference.match(method, path, host)
    // Servers pass slices of the request line (V8 SlicedStrings), which the matcher optimises for.
    const sent = set.g.chance(0.5) ? `GET ${path} HTTP/1.1`.slice(4, 4 + path.length) : path
    const actual = compiledOutcome(set.compiled, method, sent, host)
    if (canonical(actual) !== canonical(expected)) {
      expect.fail(
        `${describeSet(set.seed, set.specs)}\n` +
          `request: match(${JSON.stringify(method)}, ${JSON.stringify(path)}, ${JSON.stringify(host)})\n` +
          `reference ${canonical(expected)}\ncompiled  ${canonical(actual)}`,
      )
    }
    tally.paths++
    tally['route' in expected ? 'hit' : (expected.status as 400 | 404 | 405)]++
  }
}

/** Decoded values urlFor is given: reserved characters, '%', unicode, dot segments. */
const RAW_VALUES = ['a b', 'x/y', '?q', '#h', '%', '100%', 'é', 'caf\u00e9', '😀', '.', '..', "'"]

function urlValue(g: Gen, segment: ParamSegment): string | number | undefined {
  if (segment.optional && g.chance(0.4)) return undefined
  // Now and then a value the constraint may refuse: urlFor must then throw, and match() agree.
  if (g.chance(0.15)) return g.pick([...RAW_VALUES, ...EDGE_VALUES])
  if (segment.type === 'catchall') return catchAllRaw(g, segment.allowEmpty)
  if (segment.type === 'int')
    return g.chance(0.5) ? Number(VALID['{p:int}'](g)) : g.text(DIGITS, 1, 9)
  if (segment.type === 'string') {
    return g.chance(0.5) ? g.pick(RAW_VALUES) : g.text(LOWER + ' /?#%é.-', 1, 8)
  }
  return VALID[formOf(segment)](g)
}

function catchAllRaw(g: Gen, allowEmpty: boolean): string {
  const count = (allowEmpty ? 0 : 1) + g.int(4)
  return Array.from({ length: count }, () => g.pick([...RAW_VALUES, 'a', ''])).join('/')
}

/** The params match() must give back for what urlFor was given. */
function typed(segments: readonly ParamSegment[], params: Record<string, unknown>): object {
  return Object.fromEntries(
    segments.map((s) => {
      const value = params[s.name]
      return [s.name, value === undefined ? null : s.type === 'int' ? Number(value) : String(value)]
    }),
  )
}

/** Splits `http://host/path` (or a relative `/path`) without normalising the path as URL() would. */
function splitUrl(url: string): { host: string; path: string } {
  if (url.startsWith('/')) return { host: '', path: url }
  const start = url.indexOf('//') + 2
  const slash = url.indexOf('/', start)
  return { host: url.slice(start, slash), path: url.slice(slash) }
}

const HOST_VALUES = ['acme', 'eu', 'a-1', 'x9', '42', 'a.b', '-', 'é']

/** Random urlFor params for a route: host labels plain, path values anything. */
function urlParams(g: Gen, record: RouteRecord): Record<string, string | number | undefined> {
  const values: Record<string, string | number | undefined> = {}
  for (const s of paramsOf(hostSegments(record))) {
    values[s.name] = g.pick(HOST_VALUES)
  }
  for (const s of paramsOf(segmentsOf(record.path))) values[s.name] = urlValue(g, s)
  return values
}

function paramsOf(segments: readonly Segment[]): ParamSegment[] {
  return segments.filter((s): s is ParamSegment => s.kind === 'param')
}

/** urlFor's URL, or null when it refuses the values (which it must do with a UrlGenerationError). */
function tryUrlFor(set: Built, record: RouteRecord, params: object): string | null {
  try {
    return set.compiled.urlFor(record.name!, params, {}, record.host !== null)
  } catch (error) {
    if ((error as Error).name !== 'UrlGenerationError') {
      expect.fail(
        `${describeSet(set.seed, set.specs)}\nurlFor(${record.name}, ${canonical(params)}) threw ${String(error)}`,
      )
    }
    return null
  }
}

/**
 * The URL must match as the reference says; when the reference picks the route the URL was built
 * for (an earlier route may rightly take that value), the params must be the values given.
 * Returns whether it was the same route.
 */
function checkRoundTrip(
  set: Built,
  record: RouteRecord,
  params: Record<string, unknown>,
  url: string,
): boolean {
  const { host, path } = splitUrl(url)
  const expected = set.reference.match(record.method, path, host)
  const actual = compiledOutcome(set.compiled, record.method, path, host)
  const where = `${describeSet(set.seed, set.specs)}\nurlFor(${record.name}, ${canonical(params)}) = ${url}`
  if (canonical(actual) !== canonical(expected)) {
    expect.fail(`${where}\nreference ${canonical(expected)}\ncompiled  ${canonical(actual)}`)
  }
  if (!('route' in actual) || actual.route !== record.id) return false
  const want = typed(paramsOf([...hostSegments(record), ...segmentsOf(record.path)]), params)
  if (canonical(actual.params) !== canonical(want)) {
    expect.fail(`${where}\nparams   ${canonical(actual.params)}\nexpected ${canonical(want)}`)
  }
  return true
}

/** A value urlFor refuses could not have matched: the URL a naive client builds must not. */
function checkRefused(set: Built, record: RouteRecord, params: Record<string, unknown>): void {
  tally.refused++
  const path = naiveUrl(record.path, params)
  if (path === null) return
  const host = naiveUrl(record.host ?? '', params)
  const actual = compiledOutcome(set.compiled, record.method, path, host ?? '')
  if (!('route' in actual) || actual.route !== record.id) return
  const want = typed(paramsOf([...hostSegments(record), ...segmentsOf(record.path)]), params)
  if (canonical(actual.params) === canonical(want)) {
    const where = `${describeSet(set.seed, set.specs)}\nurlFor(${record.name}, ${canonical(params)})`
    expect.fail(`${where} was refused, but ${path} on host "${host}" matches it with those values`)
  }
}

/** The pattern filled with encodeURIComponent'd values ('/' kept in a catch-all); null if none. */
function naiveUrl(pattern: string, params: Record<string, unknown>): string | null {
  try {
    return pattern.replace(
      /\{([A-Za-z_][A-Za-z0-9_]*)\??(?::(?:[^{}]|\{[^{}]*\})*)?\}/g,
      (_, name: string) => {
        const value = params[name]
        if (value === undefined) return ''
        return String(value).split('/').map(encodeURIComponent).join('/')
      },
    )
  } catch {
    return null
  }
}

function hostSegments(record: RouteRecord): Segment[] {
  return record.host ? parseHost(record.host) : []
}

function roundTrips(set: Built): void {
  const named = set.records.filter((r) => r.name !== null)
  for (let i = 0; i < ROUND_TRIPS_PER_SET && named.length > 0; i++) {
    const record = set.g.pick(named)
    const params = urlParams(set.g, record)
    const url = tryUrlFor(set, record, params)
    tally.urls++
    if (url === null) checkRefused(set, record, params)
    else if (checkRoundTrip(set, record, params, url)) tally.sameRoute++
  }
}

/** Agreement proves little unless the workload reached every outcome and layout. */
function expectWorkloadCoverage(): void {
  expect(tally.hit / tally.paths, 'hits').toBeGreaterThan(0.3)
  expect(tally[404] / tally.paths, '404s').toBeGreaterThan(0.1)
  expect(tally[405] / tally.paths, '405s').toBeGreaterThan(0.05)
  expect(tally[400], '400s').toBeGreaterThan(30)
  expect(tally.setsWith5Shards / tally.sets, 'sets with 5+ shards').toBeGreaterThan(0.5)
  expect(tally.setsWithDynamic, 'sets with __dynamic.mjs').toBeGreaterThan(5)
  expect(tally.setsWithDynamic, 'sets without __dynamic.mjs').toBeLessThan(tally.sets - 5)
  expect(tally.setsWithDomains, 'sets with domain shards').toBeGreaterThan(5)
  expect(tally.setsWith256Statics, 'sets with over 256 static paths').toBeGreaterThan(5)
  expect(tally.sameRoute / tally.urls, 'URLs matching their own route').toBeGreaterThan(0.8)
  expect(tally.refused, 'values urlFor refused').toBeGreaterThan(100)
}

afterAll(cleanupTempDirs)

describe('fuzz: compiled matcher and urlFor vs the reference matcher', () => {
  const seeds = ONLY === null ? Array.from({ length: SETS }, (_, i) => i + 1) : [ONLY]

  it(`agrees over ${seeds.length} seeded route sets x ${PATHS_PER_SET} paths, and urlFor round-trips`, async () => {
    for (const seed of seeds) {
      const set = await buildSet(seed)
      tally.sets++
      tally.routes += set.specs.length
      compareRequests(set)
      roundTrips(set)
    }
    console.log(tally)
    if (ONLY === null) expectWorkloadCoverage()
  }, 120_000)
})

// Regressions the fuzz found, minimised.
describe('a malformed escape next to escaped hex digits', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/café', noop, 'cafe')
      r.get('/api/{p}', noop, 'api')
      r.get('/all/{rest:.*}', noop, 'all')
    })
  })

  it('answers 400, not an uncaught "not in normal form" error (`%4%32` is not `%42`)', () => {
    expect(m.match('GET', '/api/A%4%32c')).toEqual({ status: 400 })
    expect(m.match('GET', '/all/x/%%341')).toEqual({ status: 400 })
  })

  it('is never completed by a decoded digit: no second decoding (`%C%33%A%39` is not `é`)', () => {
    expect(m.match('GET', '/caf%C%33%A%39')).toEqual({ status: 404 })
    expect(m.match('GET', '/api/c%61f%C%33%A%39')).toEqual({ status: 400 })
    expect(m.match('GET', '/api/a%2%46b')).toEqual({ status: 400 })
  })

  it('is never completed by normalizePath() itself, which dec() and urlFor() use too', async () => {
    const helpers = pathToFileURL(join(import.meta.dirname, '../../templates/cache/helpers.mjs'))
    const { normalizePath } = (await import(helpers.href)) as {
      normalizePath: (path: string) => string
    }
    expect(normalizePath('/%C%33%A%39')).toBe('/%C%33%A%39')
    expect(normalizePath('/%%41%41')).toBe('/%%41A')
    expect(normalizePath('/x%4/%41%c3')).toBe('/x%4/A%C3')
  })

  it('leaves well-formed equivalent spellings matching as before', () => {
    expect(m.match('GET', '/caf%c3%a9')).toMatchObject({ route: { name: 'cafe' } })
    expect(m.match('GET', '/api/%41%2F%42')).toMatchObject({ params: { p: 'A/B' } })
    expect(m.match('GET', '/api/%ZZ')).toEqual({ status: 400 })
  })
})

describe('constraints that look around their segment', () => {
  let m: CompiledModule
  beforeAll(async () => {
    m = await compileRoutes((r) => {
      r.get('/f/{x:(?<=/)[^x]+}', noop, 'behind')
      r.get('/g/{x:[^x]*\\bcd}', noop, 'boundary')
      r.get('/h/{x:(?<=/)ab}', noop, 'fixed')
      r.get('/o/{y}/{x?:(?<=/)ab}', noop, 'optional')
      r.get('/d/{x:(?:[^x]b$)|c}/d', noop, 'dollar')
      r.get('/e/{x:(?:[^x]b$)|c}', noop, 'dollarLast')
      r.get('/r/{x:(?:[^x]b$)|c}/{rest:.*}', noop, 'dollarRest')
    })
  })

  it('match(): a lookbehind in a regex that could match "/" sees the path ({x:(?<=/)[^x]+})', () => {
    expect(m.match('GET', '/f/ab')).toMatchObject({
      route: { name: 'behind' },
      params: { x: 'ab' },
    })
    expect(m.match('GET', '/f/ab/')).toMatchObject({ params: { x: 'ab' } })
    expect(m.match('GET', '/f/xa')).toEqual({ status: 404 })
    expect(m.match('GET', '/g/a-cd')).toMatchObject({ params: { x: 'a-cd' } })
    expect(m.match('GET', '/g/acd')).toEqual({ status: 404 })
  })

  it("match(): '$' in a regex that could match \"/\" is the path's end, not its segment's", () => {
    expect(m.match('GET', '/d/ab/d')).toEqual({ status: 404 })
    expect(m.match('GET', '/d/c/d')).toMatchObject({ params: { x: 'c' } })
    expect(m.match('GET', '/e/ab')).toMatchObject({ params: { x: 'ab' } })
  })

  it('urlFor() tests them in place, as match() does, instead of refusing every value', () => {
    expect(m.urlFor('dollarLast', { x: 'ab' })).toBe('/e/ab')
    // An empty catch-all leaves a trailing slash, which match() drops: 'ab' is then last.
    expect(m.match('GET', m.urlFor('dollarRest', { x: 'ab', rest: '' }))).toMatchObject({
      params: { x: 'ab', rest: '' },
    })
    expect(() => m.urlFor('dollar', { x: 'ab' })).toThrow('parameter "x" "ab" does not match')
    expect(m.urlFor('fixed', { x: 'ab' })).toBe('/h/ab')
    expect(m.urlFor('behind', { x: 'a b' })).toBe('/f/a%20b')
    expect(m.match('GET', '/f/a%20b')).toMatchObject({ params: { x: 'a b' } })
    expect(m.urlFor('boundary', { x: 'a-cd' })).toBe('/g/a-cd')
    expect(m.urlFor('optional', { y: 'a' })).toBe('/o/a')
    expect(m.urlFor('optional', { y: 'a', x: 'ab' }, { q: '1' }, true)).toMatch(/\/o\/a\/ab\?q=1$/)
  })

  it('urlFor() still refuses a value that cannot match, with the usual error', () => {
    for (const [name, params] of [
      ['fixed', { x: 'ac' }],
      ['behind', { x: 'xa' }],
      ['boundary', { x: 'acd' }],
      ['optional', { y: 'a', x: 'b' }],
    ] as const) {
      expect(() => m.urlFor(name, params)).toThrow(
        expect.objectContaining({ name: 'UrlGenerationError', code: 'FW_URL_PARAM' }),
      )
    }
    expect(() => m.urlFor('fixed', { x: 'ac' })).toThrow(
      'parameter "x" "ac" does not match (?<=/)ab',
    )
  })
})
