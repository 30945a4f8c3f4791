/**
 * Emits `index.mjs` of one generation (match, urlFor, routes): method dispatch, host groups, the
 * statics matched in place and the first-segment dispatch to the shards. The sections are in
 * index-*.ts and match.ts; the route table and name modules are in tables.ts, the shards in
 * shards.ts.
 */
import { HTTP_METHODS, type HttpMethod } from '../../shared/methods.js'
import type { HostGroup, Variant } from '../analyze.js'
import { METHOD_KEYS, type MethodKey } from '../trie.js'
import { BANNER, CodeWriter, lit, propKey } from './code.js'
import { emitGroupMethod } from './index-group-methods.js'
import { emitHostDispatch, emitHostRegexes, staticHostRuns } from './index-hosts.js'
import { emitMatch } from './match.js'
import type { Shard } from './shards.js'

export { hostParamFields, hostRegex } from './index-hosts.js'

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
const URL_CHECK_HELPERS = ['SPELLINGS', 'UrlGenerationError', 'sticky']

/** `index.mjs`: method dispatch, host groups, first-segment dispatch to shards, 404/405/400. */
export function emitIndexModule(
  groups: readonly PlannedGroup[],
  fingerprint: string,
  formatVersion: number,
  urlChecks = false,
): string {
  const out = new CodeWriter()
  const methods = METHOD_KEYS.filter((m) => groups.some((g) => hasMethod(g, m)))
  emitLoaders(out, groups, urlChecks)
  emitInlinedResults(out, groups)
  const runs = staticHostRuns(groups)
  emitHostRegexes(out, groups, runs)
  const usesNoneIn = emitGroupMethods(out, groups, methods)
  for (const method of methods)
    emitHostDispatch(
      out,
      groups.filter((g) => hasMethod(g, method)),
      method,
      runs,
    )
  emitEntryFunctions(out, groups, methods, usesNoneIn, urlChecks)
  return [...indexPreamble(fingerprint, formatVersion, urlChecks), out.toString()].join('\n')
}

function hasMethod(group: PlannedGroup, method: MethodKey): boolean {
  return group.inlined.has(method) || group.shards.some((s) => s.methods.has(method))
}

/** The banner, imports, exported constants and part(), the loader of this generation's files. */
function indexPreamble(fingerprint: string, formatVersion: number, urlChecks: boolean): string[] {
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
  ]
}

/** Each group's method functions; returns whether one used noneIn(). */
function emitGroupMethods(
  out: CodeWriter,
  groups: readonly PlannedGroup[],
  methods: readonly MethodKey[],
): boolean {
  let usesNoneIn = false
  for (const group of groups) {
    for (const method of methods.filter((m) => hasMethod(group, m))) {
      usesNoneIn = emitGroupMethod(out, group, method, groups.length === 1) || usesNoneIn
    }
  }
  return usesNoneIn
}

/** match() over the HTTP methods (HEAD also when only GET has routes), and urlFor(). */
function emitEntryFunctions(
  out: CodeWriter,
  groups: readonly PlannedGroup[],
  methods: readonly MethodKey[],
  usesNoneIn: boolean,
  urlChecks: boolean,
): void {
  const httpMethods = methods.filter((m): m is HttpMethod => m !== 'ANY')
  const dispatch = HTTP_METHODS.filter(
    (m) => httpMethods.includes(m) || (m === 'HEAD' && httpMethods.includes('GET')),
  )
  emitMatch(out, dispatch, {
    explicitHead: httpMethods.includes('HEAD'),
    hasHosts: groups.length > 1,
    usesNoneIn,
    urlChecks,
  })
}

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
