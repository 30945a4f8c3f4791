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
  for (const group of groups) {
    if (group.host.pattern !== null)
      out.line(`const ${group.id}HOST = new RegExp(${lit(hostRegex(group.host.segments))})`)
  }
  out.line()
  let usesNoneIn = false
  for (const group of groups) {
    for (const method of methods.filter((m) => hasMethod(group, m))) {
      usesNoneIn = emitGroupMethod(out, group, method, groups.length === 1) || usesNoneIn
    }
  }
  for (const method of methods) emitMethod(out, groups, method)
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
      out.block('buckets: {', () => {
        emitBucketTree(out, buckets, 1, ({ shard, s }, e1) => {
          const call = `${shardFn(group, s, method)}(path, ${e1}, hp)`
          const rule = missRule(shard)
          if (rule === 'own') return `{ const r = ${call}; return r !== null ? r : settled(path) }`
          if (rule === 'none')
            return `{ const r = ${call}; if (r !== null) return r; break buckets }`
          usesNoneIn = true
          return `{ const r = ${call}; if (r !== null) return r; if (noneIn(${shardFn(group, s, 'ANY')}, path, ${e1}, hp)) return settled(path); break buckets }`
        })
      })
    }
    out.line(dynamic !== -1 ? `return ${shardFn(group, dynamic, method)}(path, hp)` : 'return null')
  })
  out.line()
  return usesNoneIn
}

/**
 * Dispatch on the first segment as a character trie over the bucket names: a switch on the
 * character at `at` while several names remain, shared prefixes and the rest of a lone name
 * compared inline. A name is matched when the path ends after it or has a '/' there; then
 * `call(bucket, e1)` (e1: where the first segment ends) runs, which returns or leaves the
 * enclosing `buckets:` block. 300 buckets cost a few switches, not 300 literal tests.
 */
function emitBucketTree<B extends { shard: Shard }>(
  out: CodeWriter,
  list: readonly B[],
  at: number,
  call: (bucket: B, e1: number) => string,
): void {
  const name = (b: B): string => b.shard.bucket
  // A name fully compared: it is the segment if the path ends or has a '/' here.
  const done = list.find((b) => name(b).length + 1 === at)
  if (done !== undefined)
    out.line(`if (len === ${at} || path.charCodeAt(${at}) === 47) ${call(done, at)}`)
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
      emitBucketTree(out, rest, at + shared, call),
    )
    return
  }
  const byChar = new Map<number, B[]>()
  for (const b of rest) {
    const code = name(b).charCodeAt(at - 1)
    byChar.set(code, [...(byChar.get(code) ?? []), b])
  }
  out.block(`switch (path.charCodeAt(${at})) {`, () => {
    for (const [code, group] of [...byChar].sort((a, b) => a[0] - b[0])) {
      out.line(`case ${code}: // ${safeComment(String.fromCharCode(code))}`)
      out.indent(() => {
        emitBucketTree(out, group, at + 1, call)
        out.line('break')
      })
    }
  })
}

/** A method across host groups: domain routes first (in precedence order), then hostless ones. */
function emitMethod(out: CodeWriter, groups: readonly PlannedGroup[], method: MethodKey): void {
  const name = method === 'HEAD' ? 'HEAD_ONLY' : method
  out.block(`function ${name}(path, host) {`, () => {
    for (const group of groups.filter((g) => hasMethod(g, method))) {
      if (group.host.pattern === null) {
        out.line(`return ${group.id}${method}(path, undefined)`)
        return
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
