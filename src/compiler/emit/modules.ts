/**
 * Emits `index.mjs` of one generation (match, urlFor, routes): method dispatch, host groups, the
 * statics matched in place and the first-segment dispatch to the shards. The route table and
 * name modules are in tables.ts, the shards in shards.ts.
 */
import { HTTP_METHODS, type HttpMethod } from '../../shared/methods.js'
import type { Variant } from '../analyze.js'
import { METHOD_KEYS, type MethodKey } from '../trie.js'
import { escapeRegExp, type Segment } from '../../shared/pattern.js'
import { canConsume } from '../../shared/regex-safety.js'
import type { HostGroup } from '../analyze.js'
import {
  BANNER,
  CodeWriter,
  emitStaticSwitch,
  hasLiteral,
  lit,
  propKey,
  safeComment,
} from './code.js'
import { emitMatch } from './match.js'
import type { Shard } from './shards.js'

export interface PlannedGroup {
  host: HostGroup
  shards: Shard[]
  /** The identifier prefix of this group's functions in index.mjs. */
  id: string
  /** Static paths matched in index.mjs itself (a switch on the length), by method. */
  inlined: Map<MethodKey, Map<string, Variant>>
}

const INDEX_HELPERS = ['EMPTY', 'buildUrl', 'cacheDamaged', 'normalizeHost', 'normalizePath']
/** What urlFor's in-place constraint checks use (only for route sets that have such constraints). */
const URL_CHECK_HELPERS = ['UrlGenerationError', 'sticky']

/**
 * A regex with one named group per host parameter, tested against the normalised Host. A
 * parameter is one whole label: a constraint that could match a '.' (`{t:[^-]+}`) would run over
 * several (`a.b.example.com`, or any host after `api.{t:[^x]+}`), so the label is taken as
 * `[^.]+` and the constraint must match exactly it, seen from the label's end by a lookbehind that
 * starts where the label does: at the Host's start, or after the text before the label (`l<i>`).
 */
export function hostRegex(segments: readonly Segment[]): string {
  const spansLabels = (s: Segment): boolean =>
    s.kind === 'param' && s.type !== 'string' && canConsume(s.regex!, DOT)
  let opened = ''
  const labels = segments.map((s, i) => {
    if (s.kind === 'static') return escapeRegExp(s.value)
    if (s.type === 'string') return `(?<h_${s.name}>[^.]+)`
    if (!spansLabels(s)) return `(?<h_${s.name}>(?:${s.regex}))`
    if (i === 0) return `(?<h_${s.name}>[^.]+)(?<=^(?:${s.regex}))`
    // l<i> opens at the start and closes here, after the '.' that ends the label before.
    opened = `(?<l${i}>` + opened
    return `)(?<h_${s.name}>[^.]+)(?<=^\\k<l${i}>(?:${s.regex}))`
  })
  return `^${opened}${labels.join('\\.')}$`
}

const DOT = 46

/**
 * Host parameter fields of a route's results: `"account": hp.groups.h_account` (ints as numbers).
 * The group's regex names its captures after the group's first pattern; a route of another
 * pattern alike (`{tenant}.example.com`) reads the same label under its own name.
 */
export function hostParamFields(
  groupSegments: readonly Segment[],
  routeSegments: readonly Segment[],
): string[] {
  return routeSegments.flatMap((s, i) => {
    if (s.kind !== 'param') return []
    const read = `hp.groups.h_${(groupSegments[i] as { name: string }).name}`
    return [`${propKey(s.name)}: ${s.type === 'int' ? `Number(${read})` : read}`]
  })
}

/** `index.mjs`: method dispatch, host groups, first-segment dispatch to shards, 404/405/400. */
export function emitIndexModule(
  groups: readonly PlannedGroup[],
  fingerprint: string,
  formatVersion: number,
  urlChecks = false,
): string {
  const out = new CodeWriter()
  const methods = METHOD_KEYS.filter((m) => groups.some((g) => hasMethod(g, m)))
  const httpMethods = methods.filter((m): m is HttpMethod => m !== 'ANY')
  emitLoaders(out, groups, urlChecks)
  emitInlinedResults(out, groups)
  const runs = staticHostRuns(groups)
  for (const group of groups) {
    if (group.host.pattern !== null && !runs.has(group))
      out.line(`const ${group.id}HOST = new RegExp(${lit(hostRegex(group.host.segments))})`)
  }
  out.line()
  let usesNoneIn = false
  for (const group of groups) {
    for (const method of methods.filter((m) => hasMethod(group, m))) {
      usesNoneIn = emitGroupMethod(out, group, method, groups.length === 1) || usesNoneIn
    }
  }
  for (const method of methods) emitMethod(out, groups, method, runs)
  const dispatch = HTTP_METHODS.filter(
    (m) => httpMethods.includes(m) || (m === 'HEAD' && httpMethods.includes('GET')),
  )
  emitMatch(out, dispatch, {
    explicitHead: httpMethods.includes('HEAD'),
    hasHosts: groups.length > 1,
    usesNoneIn,
    urlChecks,
  })
  return [
    BANNER('Entry of one generation: match(), urlFor(), routes. Imported through ../router.mjs.'),
    `import { createRequire } from 'node:module'`,
    `import { ROUTES, route } from './__routes.mjs'`,
    `import { ${[...INDEX_HELPERS, ...(urlChecks ? URL_CHECK_HELPERS : [])].join(', ')} } from './__helpers.mjs'`,
    '',
    `export { setBaseUrl, UrlGenerationError } from './__helpers.mjs'`,
    'export const routes = ROUTES',
    `export const FINGERPRINT = ${lit(fingerprint)}`,
    `export const FORMAT_VERSION = ${formatVersion}`,
    'const NOT_FOUND = Object.freeze({ status: 404 })',
    'const BAD_REQUEST = Object.freeze({ status: 400 })',
    '// Shards and names load on first use: require() of an ES module is synchronous on Node 20.19+,',
    '// so start-up reads only this file and the route table, whatever the number of routes.',
    'const require = createRequire(import.meta.url)',
    '/** A file of this generation; one deleted or damaged since the build is named, with the fix. */',
    'function part(file) {',
    '  let module',
    '  try {',
    '    module = require(file)',
    '  } catch (error) {',
    '    throw cacheDamaged(file, error)',
    '  }',
    '  // An emptied file (a full disk, a bad copy) loads as a module without exports.',
    "  if (Object.keys(module).length === 0) throw cacheDamaged(file, new Error('it is empty'))",
    '  return module',
    '}',
    out.toString(),
  ].join('\n')
}

function hasMethod(group: PlannedGroup, method: MethodKey): boolean {
  return group.inlined.has(method) || group.shards.some((s) => s.methods.has(method))
}

/** The expression calling a shard's method, loading the shard on first use. */
const shardFn = (group: PlannedGroup, s: number, method: MethodKey): string =>
  `(${group.id}s${s} ??= shard(${lit(group.shards[s]!.file)})).${method}`

/**
 * One variable per shard, null until first used; `load()` fills them all and reads the names
 * (NAMES and IN_PLACE are urlFor's, emitted by match.ts), so that a process that awaited it keeps
 * working once a later build or `route:cache clear` deleted this generation. Async: a damaged file
 * rejects its promise rather than throwing at the call.
 */
function emitLoaders(out: CodeWriter, groups: readonly PlannedGroup[], urlChecks: boolean): void {
  const all = groups.flatMap((group) =>
    group.shards.map((shard, s) => ({ name: `${group.id}s${s}`, file: shard.file })),
  )
  out.line(`let ${all.map((s) => `${s.name} = null`).join(', ')}`)
  out.line('const shard = (file) => part(`./${file}.mjs`).bind(route)')
  out.line()
  out.line('/** Loads every shard and the names now (optional: each loads on first use). */')
  out.block('export async function load() {', () => {
    for (const s of all) out.line(`${s.name} ??= shard(${lit(s.file)})`)
    out.line(
      urlChecks
        ? "if (NAMES === null) ({ NAMES, IN_PLACE } = part('./__names.mjs'))"
        : "NAMES ??= part('./__names.mjs').NAMES",
    )
  })
  out.line()
}

/** Route and result constants of the static paths matched in this module. */
function emitInlinedResults(out: CodeWriter, groups: readonly PlannedGroup[]): void {
  const ids = new Map<number, string>()
  for (const group of groups) {
    for (const statics of group.inlined.values()) {
      for (const variant of statics.values()) {
        const id = variant.route.record.id
        const absent = variant.absent.map((n) => `${propKey(n)}: null`).join(', ')
        ids.set(id, absent === '' ? 'EMPTY' : `Object.freeze({ ${absent} })`)
      }
    }
  }
  for (const [id, params] of [...ids].sort((a, b) => a[0] - b[0])) {
    out.line(`const HIT${id} = Object.freeze({ route: route(${id}), params: ${params} })`)
  }
  out.line()
}

/**
 * One host group's entry for one method: static paths, root, the first segment's shard, dynamic.
 * When `only` (the group is the app's only one) and no path starts with a parameter, nothing
 * outside a bucket's shard can match its paths, so a miss there is settled without match()'s
 * any-method walk from the index: at once when no other method has routes in the shard (or
 * static paths inlined in the index under it), else by the shard's own any-method walk
 * (ANY is never inlined, so its shard part has every path). Returns whether it used noneIn().
 */
function emitGroupMethod(
  out: CodeWriter,
  group: PlannedGroup,
  method: MethodKey,
  only: boolean,
): boolean {
  const index = (kind: Shard['kind']): number =>
    group.shards.findIndex((s) => s.kind === kind && s.methods.has(method))
  const root = index('root')
  const dynamic = index('dynamic')
  const settled = only && method !== 'ANY' && !group.shards.some((s) => s.kind === 'dynamic')
  const othersInlined = new Set<string>()
  for (const [m, statics] of group.inlined) {
    if (m === method || m === 'ANY') continue
    for (const path of statics.keys()) othersInlined.add(path.slice(1).split('/')[0]!)
  }
  const missRule = (shard: Shard): 'none' | 'own' | 'any-walk' => {
    if (!settled || !shard.methods.has('ANY')) return 'none'
    const exclusive = [...shard.methods.keys()].every((m) => m === method || m === 'ANY')
    return exclusive && !othersInlined.has(shard.bucket) ? 'own' : 'any-walk'
  }
  let usesNoneIn = false
  const split: string[] = []
  const buckets = group.shards
    .map((shard, s) => ({ shard, s }))
    .filter(({ shard }) => shard.kind === 'bucket' && shard.methods.has(method))
  out.block(`function ${group.id}${method}(path, hp) {`, () => {
    out.line('const len = path.length')
    emitStaticSwitch(
      out,
      group.inlined.get(method) ?? new Map<string, Variant>(),
      (v) => `HIT${v.route.record.id}`,
    )
    if (root !== -1) {
      out.block('if (len === 1) {', () => {
        out.line(`const r = ${shardFn(group, root, method)}(path, 1, hp)`)
        out.line('if (r !== null) return r')
      })
    }
    if (buckets.length > 0) {
      // No indexOf('/') to find the first segment: a character trie over the bucket names, each
      // name ending where the path ends or has a '/', which is then e1 (a constant per bucket).
      const call: BucketCall<(typeof buckets)[number]> = ({ shard, s }, e1, leave) => {
        const call = `${shardFn(group, s, method)}(path, ${e1}, hp)`
        const rule = missRule(shard)
        if (rule === 'own') return `{ const r = ${call}; return r !== null ? r : settled(path) }`
        if (rule === 'none') return `{ const r = ${call}; if (r !== null) return r; ${leave} }`
        usesNoneIn = true
        return `{ const r = ${call}; if (r !== null) return r; if (noneIn(${shardFn(group, s, 'ANY')}, path, ${e1}, hp)) return settled(path); ${leave} }`
      }
      const tree = (outline: BucketOutline | null): string => {
        const w = new CodeWriter()
        w.block('buckets: {', () => emitBucketTree(w, buckets, 1, call, 'break buckets', outline))
        return w.toString()
      }
      // In one piece unless too large for V8 to optimise: 1,000 first segments made ~220 K
      // characters (4-10x slower lookups), so the largest cases go to functions of their own.
      let text = tree(null)
      if (text.length > BUCKETS_MAX)
        text = tree({ functions: split, name: () => `${group.id}${method}B${split.length}` })
      for (const line of text.trimEnd().split('\n')) out.line(line)
    }
    out.line(dynamic !== -1 ? `return ${shardFn(group, dynamic, method)}(path, hp)` : 'return null')
  })
  out.line()
  for (const fn of split) out.line(fn)
  return usesNoneIn
}

// The largest bucket trie kept in a group's method function (see FUNCTION_MAX in walk.ts).
const BUCKETS_MAX = 24_000

/** A bucket's call (see emitBucketTree); `leave` leaves the trie when the shard had no hit. */
type BucketCall<B> = (bucket: B, e1: number, leave: string) => string

/** Where the split-off parts of a large bucket trie go (top-level functions of index.mjs). */
interface BucketOutline {
  functions: string[]
  name: () => string
}

/**
 * Dispatch on the first segment as a character trie over the bucket names: a switch on the
 * character at `at` while several names remain, shared prefixes and the rest of a lone name
 * compared inline. A name is matched when the path ends after it or has a '/' there; then
 * `call(bucket, e1, leave)` (e1: where the first segment ends) runs, which returns or leaves the
 * trie (`leave`). 300 buckets cost a few switches, not 300 literal tests. With `outline`, a
 * switch whose cases pass BUCKETS_MAX has its largest cases as functions of their own (a miss
 * there returns null, as falling out of the trie does).
 */
function emitBucketTree<B extends { shard: Shard }>(
  out: CodeWriter,
  list: readonly B[],
  at: number,
  call: BucketCall<B>,
  leave: string,
  outline: BucketOutline | null,
): void {
  const name = (b: B): string => b.shard.bucket
  // A name fully compared: it is the segment if the path ends or has a '/' here.
  const done = list.find((b) => name(b).length + 1 === at)
  if (done !== undefined)
    out.line(`if (len === ${at} || path.charCodeAt(${at}) === 47) ${call(done, at, leave)}`)
  const rest = list.filter((b) => b !== done)
  if (rest.length === 0) return
  // A prefix every name left shares ("res" of res0…res299, or the whole rest of a lone name)
  // is one test, not a switch per character.
  let shared = 0
  const first = name(rest[0]!)
  while (
    at - 1 + shared < first.length &&
    rest.every((b) => name(b)[at - 1 + shared] === first[at - 1 + shared])
  )
    shared++
  if (shared > 0) {
    out.block(`if (${hasLiteral(first.slice(at - 1, at - 1 + shared), String(at))}) {`, () =>
      emitBucketTree(out, rest, at + shared, call, leave, outline),
    )
    return
  }
  const byChar = new Map<number, B[]>()
  for (const b of rest) {
    const code = name(b).charCodeAt(at - 1)
    byChar.set(code, [...(byChar.get(code) ?? []), b])
  }
  const cases = [...byChar].sort((a, b) => a[0] - b[0])
  const outlined = new Set<number>()
  if (outline !== null) {
    const sizes = cases.map(([code, group]) => {
      const w = new CodeWriter()
      emitBucketTree(w, group, at + 1, call, leave, null)
      return { code, size: w.toString().length }
    })
    let total = sizes.reduce((n, c) => n + c.size, 0)
    for (const { code, size } of sizes.sort((a, b) => b.size - a.size)) {
      if (total <= BUCKETS_MAX) break
      outlined.add(code)
      total -= size
    }
  }
  out.block(`switch (path.charCodeAt(${at})) {`, () => {
    for (const [code, group] of cases) {
      out.line(`case ${code}: // ${safeComment(String.fromCharCode(code))}`)
      out.indent(() => {
        if (outlined.has(code)) {
          const fn = new CodeWriter()
          const name = outline!.name()
          // Its slot first, so functions stay in order of their names (nested ones after it).
          const slot = outline!.functions.push('') - 1
          fn.block(`function ${name}(path, len, hp) {`, () => {
            emitBucketTree(fn, group, at + 1, call, 'return null', outline)
            fn.line('return null')
          })
          outline!.functions[slot] = fn.toString()
          out.line(`{ const r = ${name}(path, len, hp); if (r !== null) return r }`)
        } else {
          emitBucketTree(out, group, at + 1, call, leave, outline)
        }
        out.line('break')
      })
    }
  })
}

// More consecutive hosts without parameters than this are found by one Map lookup (see below).
const STATIC_HOSTS_MIN = 5

/**
 * The groups of runs of more than STATIC_HOSTS_MIN - 1 consecutive hosts without parameters
 * (`shop1.example.com`, `shop2.example.com`, ...), by run number. Each was a regex tested in
 * turn, so a lookup tested all of them before the hostless routes (~200 µs for 1,000 hosts, in a
 * method function too large for V8 to optimise). The hosts of a run are distinct (alike patterns
 * are one group) and no other group lies between them, so at most one of them matches a Host,
 * and one Map lookup finds it in the same precedence.
 */
function staticHostRuns(groups: readonly PlannedGroup[]): Map<PlannedGroup, number> {
  const runs = new Map<PlannedGroup, number>()
  let run: PlannedGroup[] = []
  let count = 0
  for (const group of [...groups, null]) {
    const isStatic =
      group !== null &&
      group.host.pattern !== null &&
      group.host.segments.every((s) => s.kind === 'static')
    if (isStatic) {
      run.push(group)
      continue
    }
    if (run.length >= STATIC_HOSTS_MIN) {
      for (const g of run) runs.set(g, count)
      count++
    }
    run = []
  }
  return runs
}

/** The Host a group without parameters matches (its regex is `^` this `$`, escaped). */
const staticHost = (group: PlannedGroup): string =>
  group.host.segments.map((s) => (s as { value: string }).value).join('.')

/** A method across host groups: domain routes first (in precedence order), then hostless ones. */
function emitMethod(
  out: CodeWriter,
  groups: readonly PlannedGroup[],
  method: MethodKey,
  runs: Map<PlannedGroup, number>,
): void {
  const name = method === 'HEAD' ? 'HEAD_ONLY' : method
  const withMethod = groups.filter((g) => hasMethod(g, method))
  const lookups = new Map<number, PlannedGroup[]>()
  for (const group of withMethod) {
    const run = runs.get(group)
    if (run !== undefined) lookups.set(run, [...(lookups.get(run) ?? []), group])
  }
  for (const [run, list] of lookups) {
    const entries = list.map((g) => `[${lit(staticHost(g))}, ${g.id}${method}]`)
    out.line(`const H${run}${method} = new Map([${entries.join(', ')}])`)
  }
  out.block(`function ${name}(path, host) {`, () => {
    for (const group of withMethod) {
      if (group.host.pattern === null) {
        out.line(`return ${group.id}${method}(path, undefined)`)
        return
      }
      const run = runs.get(group)
      if (run !== undefined) {
        if (lookups.get(run)![0] !== group) continue
        out.line(`// ${lookups.get(run)!.length} hosts without parameters, one lookup`)
        out.block('{', () => {
          out.line(`const find = H${run}${method}.get(host)`)
          out.block('if (find !== undefined) {', () => {
            out.line('const r = find(path, undefined)')
            out.line('if (r !== null) return r')
          })
        })
        continue
      }
      out.line(`// host ${safeComment(group.host.pattern)}`)
      out.block('{', () => {
        out.line(`const hp = ${group.id}HOST.exec(host)`)
        out.block('if (hp !== null) {', () => {
          out.line(`const r = ${group.id}${method}(path, hp)`)
          out.line('if (r !== null) return r')
        })
      })
    }
    out.line('return null')
  })
  out.line()
}
