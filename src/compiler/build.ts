/**
 * The pure part of `route:cache build`: from registered routes to the files of a cache generation
 * and its manifest. Touches no disk (see write-cache.ts for that).
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CACHE_FORMAT_VERSION, GENERATION_PREFIX, type Manifest } from '../shared/cache-format.js'
import { fingerprintRoutes, type RouteRecord } from '../shared/route-record.js'
import {
  analyzeRoutes,
  type Aliases,
  type AnalyzedRoute,
  type HostGroup,
  type RouteTable,
} from './analyze.js'
import { BANNER } from './emit/code.js'
import { emitIndexModule, hostParamFields, type PlannedGroup } from './emit/modules.js'
import { emitShard, partVariants, planShards, type Shard } from './emit/shards.js'
import { emitNamesModule, emitRoutesFiles, inPlaceChecks } from './emit/tables.js'
import { emitTypes } from './emit/types.js'
import { buildMethodTables, type MethodTable } from './trie.js'

const HELPERS_TEMPLATE = fileURLToPath(
  new URL('../../templates/cache/helpers.mjs', import.meta.url),
)
// router.d.mts is emitted only when a build is written (ts-morph is slow to load), so it is not
// among the files "up to date" compares; the code that emits it is, in its place: after an
// upgrade of fw whose declarations changed, a build of unchanged routes writes them again.
// (types.ts when run from the sources, as the tests do; types.js once built.)
const TYPES_EMITTER = fileURLToPath(
  new URL(`./emit/types${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
)

export interface BuildOutput {
  generation: string
  /** Files of the generation folder, by file name. */
  files: Map<string, string>
  /** `router.mjs`: the stable entry re-exporting the generation. */
  entry: string
  /** `router.d.mts`: types of the entry, with typed route names and parameters (emitted on demand). */
  types: () => Promise<string>
  /** `routes.mjs`: re-exports the generation's bundled routes file, or null when not bundled. */
  routesEntry: string | null
  manifest: Manifest
  table: RouteTable
}

export interface BuildOptions {
  /** The routes file's aliases (registrar.aliases), or just their names. */
  aliases?: Aliases
  /** sha256 of the source files the routes came from, recorded in the manifest. */
  inputs?: Record<string, string>
  /** Fixed for reproducible output in tests; default: now. */
  now?: Date
  /** The routes file bundled as an ES module, shipped as routes.mjs for production servers. */
  routesCode?: string
}

/**
 * Compiles registered routes into the files of a cache generation.
 * @example
 * const { files, manifest } = buildRouter(registrar.routes, { aliases: registrar.aliases })
 */
export function buildRouter(
  records: readonly RouteRecord[],
  options: BuildOptions = {},
): BuildOutput {
  const table = analyzeRoutes(records, options.aliases ?? new Set())
  const fingerprint = fingerprintRoutes(records)
  const groups = planGroups(table)
  const files = emitFiles(table, groups, fingerprint, options.routesCode)
  const now = options.now ?? new Date()
  const generation = `${GENERATION_PREFIX}${now.getTime()}-${randomBytes(4).toString('hex')}`
  const manifest: Manifest = {
    formatVersion: CACHE_FORMAT_VERSION,
    generation,
    fingerprint,
    contentHash: hashFiles(files),
    routeCount: records.length,
    shards: describeShards(groups, files),
    inputs: options.inputs ?? {},
    builtAt: now.toISOString(),
  }
  const routesEntry = options.routesCode === undefined ? null : emitRoutesEntry(generation)
  return {
    generation,
    files,
    entry: emitEntry(generation),
    routesEntry,
    types: () => emitTypes(table),
    manifest,
    table,
  }
}

/** One group per host pattern: its method tables, the statics index.mjs inlines, its shards. */
function planGroups(table: RouteTable): PlannedGroup[] {
  // The generation's other modules: a first segment of that name (`/routes`) gets `routes~2.mjs`.
  const taken = new Set(['__routes', '__names', '__helpers', 'index', 'routes'])
  return table.hosts.map((host, i) => {
    const routes = table.routes.filter((r) => host.patterns.includes(r.record.host))
    const prefix = host.pattern === null ? '' : `${host.pattern}.`
    const tables = buildMethodTables(routes)
    const inlined = new Map(
      tables.filter((t) => inlineStatics(host, t)).map((t) => [t.method, t.statics]),
    )
    return {
      host,
      id: `g${i}`,
      inlined,
      shards: planShards(tables, prefix, taken, new Set(inlined.keys())),
    }
  })
}

/** Every file of the generation, by name: the shards, the route table, names, helpers, entry. */
function emitFiles(
  table: RouteTable,
  groups: readonly PlannedGroup[],
  fingerprint: string,
  routesCode: string | undefined,
): Map<string, string> {
  const files = new Map<string, string>()
  for (const group of groups) {
    const hostParams = (route: AnalyzedRoute): string[] =>
      hostParamFields(group.host.segments, route.hostSegments ?? [])
    const hostLabel = group.host.pattern ?? 'any'
    for (const shard of group.shards)
      files.set(`${shard.file}.mjs`, emitShard(shard, { hostLabel, hostParams }))
  }
  const routesFiles = emitRoutesFiles(table.routes)
  files.set('__routes.json', routesFiles.json)
  files.set('__routes.mjs', routesFiles.module)
  files.set('__names.mjs', emitNamesModule(table.routes))
  files.set('__helpers.mjs', readFileSync(HELPERS_TEMPLATE, 'utf8'))
  const urlChecks = table.routes.some((r) => r.record.name !== null && inPlaceChecks(r).length > 0)
  files.set('index.mjs', emitIndexModule(groups, fingerprint, CACHE_FORMAT_VERSION, urlChecks))
  if (routesCode !== undefined) files.set('routes.mjs', routesCode)
  return files
}

/** The manifest's shard list: file, host, bucket, route count and content hash of each. */
function describeShards(
  groups: readonly PlannedGroup[],
  files: ReadonlyMap<string, string>,
): Manifest['shards'] {
  return groups.flatMap((g) =>
    g.shards.map((s) => ({
      file: `${s.file}.mjs`,
      host: g.host.pattern,
      bucket: s.kind === 'bucket' ? s.bucket : `__${s.kind}`,
      routes: countRoutes(s, g.inlined),
      sha256: sha256(files.get(`${s.file}.mjs`)!),
    })),
  )
}

// Up to this many static paths of one method are matched by one switch in index.mjs (no shard
// call); more would make that function too large for V8 to optimise (~60 KB of bytecode).
const INLINE_STATICS_MAX = 256

/** Static paths go in index.mjs for real methods of groups whose results need no host params. */
function inlineStatics(host: HostGroup, table: MethodTable): boolean {
  const hostParams = host.segments.some((s) => s.kind === 'param')
  return (
    table.method !== 'ANY' &&
    !hostParams &&
    table.statics.size > 0 &&
    table.statics.size <= INLINE_STATICS_MAX
  )
}

function emitEntry(generation: string): string {
  return `${BANNER('Stable entry: re-exports the active generation. Production code imports this file.')}
export * from './${generation}/index.mjs'
export const GENERATION = ${JSON.stringify(generation)}
`
}

function emitRoutesEntry(generation: string): string {
  return `${BANNER('The routes file, bundled: a production server imports its default export (no TypeScript needed).')}
export { default } from './${generation}/routes.mjs'
`
}

/**
 * The routes a shard serves (the manifest's `routes` of a shard). Its ANY part keeps one route per
 * path, so routes sharing a path (POST and PUT /echo) are counted from their methods' parts, and
 * the static paths of its bucket matched in index.mjs from there: without these, a shard of
 * POST, PUT, PATCH and DELETE /echo counted 1 route.
 */
function countRoutes(shard: Shard, inlined: PlannedGroup['inlined']): number {
  const ids = new Set<number>()
  for (const part of shard.methods.values())
    for (const v of partVariants(part)) ids.add(v.route.record.id)
  for (const statics of inlined.values()) {
    for (const [path, v] of statics) {
      const bucket = path === '/' ? null : path.slice(1).split('/')[0]!
      if (
        shard.kind === 'root' ? bucket === null : shard.kind === 'bucket' && bucket === shard.bucket
      )
        ids.add(v.route.record.id)
    }
  }
  return ids.size
}

function hashFiles(files: Map<string, string>): string {
  const hash = createHash('sha256')
  for (const name of [...files.keys()].sort()) hash.update(`${name}\n${files.get(name)}\n`)
  hash.update(`router.d.mts emitter\n${readFileSync(TYPES_EMITTER, 'utf8')}`)
  return hash.digest('hex')
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex')
}
