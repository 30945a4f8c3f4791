/**
 * Turns registered routes into a validated route table: patterns parsed, optional parameters
 * expanded into variants, precedence keys computed, and every rule of the route table enforced
 * (duplicates, shadowed routes, catch-all order, names, middleware aliases, handlers).
 */
import { FwError, type ErrorCode, type SourceLocation } from '../shared/errors.js'
import { checkAlias } from '../shared/middleware-aliases.js'
import { checkUniqueNames, parsePath, type ParamSegment, type Segment } from '../shared/pattern.js'
import type { RouteRecord } from '../shared/route-record.js'
import { asciiHost } from './host-labels.js'
import { compareKeys, segmentKey, type SegmentKey } from './precedence.js'

export interface AnalyzedRoute {
  record: RouteRecord
  segments: Segment[]
  hostSegments: Segment[] | null
  variants: Variant[]
}

/** One concrete shape of a route: a route with k optional trailing parameters has k + 1. */
export interface Variant {
  route: AnalyzedRoute
  segments: Segment[]
  keys: SegmentKey[]
  /** Optional parameters that this variant leaves out (they are null in the params). */
  absent: string[]
}

export interface RouteTable {
  routes: AnalyzedRoute[]
  /** Distinct host patterns, in the order they are tried (domain routes before hostless ones). */
  hosts: HostGroup[]
}

export interface HostGroup {
  /** The pattern as written (the first, of several alike), or null for routes without a domain. */
  pattern: string | null
  /** Every pattern of the group: they match the same hosts (`{account}.x.com`, `{tenant}.x.com`). */
  patterns: (string | null)[]
  segments: Segment[]
  keys: SegmentKey[]
}

/** The routes file's aliases: their names, or (to check where they lead) what each names. */
export type Aliases = ReadonlySet<string> | ReadonlyMap<string, unknown>

/**
 * Parses and validates the registered routes.
 * @example
 * const table = analyzeRoutes(registrar.routes, registrar.aliases)
 */
export function analyzeRoutes(records: readonly RouteRecord[], aliases: Aliases): RouteTable {
  if (records.length === 0) {
    throw new FwError('FW_ROUTES_EMPTY', 'The routes file registers no routes', {
      hint: 'Register at least one route, e.g. r.get("/", handler).',
    })
  }
  const regexOrder = new Map<string, number>()
  const routes = records.map((record) => analyzeRoute(record, aliases, regexOrder))
  checkNames(routes)
  checkCatchAllOrder(routes)
  checkConflicts(routes)
  return { routes, hosts: hostGroups(routes, regexOrder) }
}

function analyzeRoute(
  record: RouteRecord,
  aliases: Aliases,
  regexOrder: Map<string, number>,
): AnalyzedRoute {
  checkHandler(record)
  for (const ref of record.middleware) {
    if (typeof ref === 'function') continue
    const problem =
      typeof ref === 'string'
        ? checkAlias(ref, aliases)
        : 'middleware must be an alias string or a function'
    if (problem !== null) {
      throw fail(
        'FW_MIDDLEWARE_INVALID',
        `${label(record)}: ${problem}`,
        record.location,
        middlewareHint(aliases),
      )
    }
  }
  const segments = withLocation(record, () => parsePath(record.path))
  const hostSegments =
    record.host === null ? null : withLocation(record, () => asciiHost(record.host!))
  if (hostSegments) {
    withLocation(record, () =>
      checkUniqueNames(`${record.host}${record.path}`, [...hostSegments, ...segments]),
    )
  }
  const route: AnalyzedRoute = { record, segments, hostSegments, variants: [] }
  route.variants = expandOptionals(segments).map(({ segments: shape, absent }) => ({
    route,
    segments: shape,
    keys: shape.map((s) => segmentKey(s, regexOrder)),
    absent,
  }))
  return route
}

function expandOptionals(segments: Segment[]): { segments: Segment[]; absent: string[] }[] {
  const firstOptional = segments.findIndex((s) => s.kind === 'param' && s.optional)
  if (firstOptional === -1) return [{ segments, absent: [] }]
  const shapes = []
  for (let end = firstOptional; end <= segments.length; end++) {
    const absent = segments.slice(end).map((s) => (s as ParamSegment).name)
    shapes.push({ segments: segments.slice(0, end), absent })
  }
  return shapes
}

function checkHandler(record: RouteRecord): void {
  const h = record.handler as unknown
  const ok =
    typeof h === 'function' ||
    // 'Key' or 'Key@method': 'users@', '@index' or 'a@b@c' would fail, or call b, at run time.
    (typeof h === 'string' && /^[^@\s]+(?:@[^@\s]+)?$/.test(h)) ||
    (Array.isArray(h) &&
      h.length === 2 &&
      typeof h[0] === 'function' &&
      typeof h[1] === 'string' &&
      typeof (h[0] as { prototype?: Record<string, unknown> }).prototype?.[h[1]] === 'function')
  if (!ok) {
    const missing = missingMethod(h)
    throw fail(
      'FW_HANDLER_INVALID',
      `${label(record)}: the handler must be a function, a [Class, 'method'] pair naming an existing method, or a 'Class@method' string${missing ? `: ${missing.className} has no method "${missing.method}"` : ''}`,
      record.location,
      missing
        ? // A class field holding an arrow function exists on instances only: the build, which
          // does not construct controllers, cannot see it, and it is the usual way to get here.
          `Check the spelling against ${missing.className}'s methods. An arrow function in a class field (${missing.method} = (req) => …) is not a method: declare ${missing.method}(req) { … } in the class body (fw calls it on the instance, so \`this\` works).`
        : 'Check the second argument of the route registration.',
    )
  }
}

/** The class and method name of a [Class, 'method'] pair whose class lacks that method. */
function missingMethod(h: unknown): { className: string; method: string } | undefined {
  if (!Array.isArray(h) || h.length !== 2) return undefined
  const [Class, method] = h as unknown[]
  if (typeof Class !== 'function' || typeof method !== 'string') return undefined
  return { className: Class.name || 'the class', method }
}

function checkNames(routes: AnalyzedRoute[]): void {
  const seen = new Map<string, RouteRecord>()
  for (const { record } of routes) {
    if (record.name === null) continue
    if (!/^[^\s]+$/.test(record.name)) {
      throw fail(
        'FW_NAME_INVALID',
        `${label(record)}: route name "${record.name}" is empty or has spaces`,
        record.location,
        'Use names such as "users.show".',
      )
    }
    const first = seen.get(record.name)
    if (first) {
      throw fail(
        'FW_NAME_DUPLICATE',
        `Route name "${record.name}" is used twice: ${label(record)} and ${label(first)} (${at(first)})`,
        record.location,
        'Route names must be unique; rename one of them.',
      )
    }
    seen.set(record.name, record)
  }
}

/**
 * The spec's rule: a catch-all route is registered last in its scope. Its scope is the paths under
 * its prefix (and host): a later route that could match such a path is an error, wherever it is.
 */
function checkCatchAllOrder(routes: AnalyzedRoute[]): void {
  const catchAlls: AnalyzedRoute[] = []
  for (const route of routes) {
    const earlier = catchAlls.find(
      (c) => c.record.host === route.record.host && underPrefix(c, route),
    )
    if (earlier) {
      throw fail(
        'FW_CATCHALL_NOT_LAST',
        `${label(route.record)} is registered after the catch-all ${label(earlier.record)} (${at(earlier.record)}), which covers its paths`,
        route.record.location,
        'Register the catch-all after every route under its prefix (the fallback last of all).',
      )
    }
    const last = route.segments[route.segments.length - 1]
    if (last?.kind === 'param' && last.type === 'catchall') catchAlls.push(route)
  }
}

/**
 * Whether some path of `route` lies under the prefix of `catchAll` (params may match anything).
 * A route that is itself a catch-all at the same depth or shallower is broader: it may come later.
 */
function underPrefix(catchAll: AnalyzedRoute, route: AnalyzedRoute): boolean {
  const prefix = catchAll.segments.slice(0, -1)
  for (let i = 0; i < prefix.length; i++) {
    const mine = route.segments[i]
    const theirs = prefix[i]!
    if (mine === undefined) return false
    if (mine.kind === 'param' && mine.type === 'catchall') return false
    if (mine.kind === 'static' && theirs.kind === 'static' && mine.value !== theirs.value)
      return false
  }
  const next = route.segments[prefix.length]
  return next !== undefined && !(next.kind === 'param' && next.type === 'catchall')
}

/**
 * Two variants with the same method, host and keys match exactly the same paths, and the first
 * registered wins. A route is an error only when every variant it has is taken so: `/u/{name?}`
 * after `/u/{id}` still answers `/u` (its short variant), after `/u` it still answers `/u/x`.
 */
function checkConflicts(routes: AnalyzedRoute[]): void {
  const seen = new Map<string, Variant>()
  for (const route of routes) {
    const hostKey =
      route.hostSegments?.map((s) => keyText(segmentKey(s, new Map()))).join('.') ?? ''
    const ids = route.variants.map(
      (variant) => `${route.record.method} ${hostKey} ${variant.keys.map(keyText).join('/')}`,
    )
    const taken = ids.map((id) => seen.get(id))
    if (taken.every((first) => first !== undefined)) throw conflictError(taken as Variant[], route)
    ids.forEach((id, i) => {
      if (!seen.has(id)) seen.set(id, route.variants[i]!)
    })
  }
}

function conflictError(taken: readonly Variant[], later: AnalyzedRoute): FwError {
  const b = later.record
  const firsts = [...new Set(taken.map((v) => v.route.record))]
  const bare = (path: string): string => (path.length > 1 ? path.replace(/\/$/, '') : path)
  const same = firsts.find((a) => bare(a.path) === bare(b.path) && a.host === b.host)
  if (same) {
    return fail(
      'FW_ROUTE_DUPLICATE',
      `${label(b)} is registered twice (first at ${at(same)})`,
      b.location,
      'Remove one of the registrations, or give them different methods or paths.',
    )
  }
  const by = firsts.map((a) => `${label(a)} (${at(a)})`).join(' and ')
  return fail(
    'FW_ROUTE_SHADOWED',
    `${label(b)} can never match: ${by} ${firsts.length > 1 ? 'match' : 'matches'} the same paths first`,
    b.location,
    'Give the parameters different constraints (e.g. {id:int}) or the routes different paths.',
  )
}

/**
 * Domain patterns that match the same hosts alike (by their keys: `Admin.x.com` and `admin.x.com`,
 * `{account}.x.com` and `{tenant}.x.com`) are one group, so that their routes are ordered by their
 * paths as one table: as separate groups, all of the first group's routes came before the second's.
 */
function hostGroups(routes: AnalyzedRoute[], regexOrder: Map<string, number>): HostGroup[] {
  const groups = new Map<string, HostGroup>()
  for (const { record, hostSegments } of routes) {
    if (hostSegments === null) continue
    const keys = hostSegments.map((s) => segmentKey(s, regexOrder))
    const id = keys.map(keyText).join('.')
    const group = groups.get(id)
    if (group === undefined) {
      groups.set(id, {
        pattern: record.host,
        patterns: [record.host],
        segments: hostSegments,
        keys,
      })
    } else if (!group.patterns.includes(record.host)) {
      group.patterns.push(record.host)
    }
  }
  const sorted = [...groups.values()].sort((x, y) => compareKeys(x.keys, y.keys))
  return [...sorted, { pattern: null, patterns: [null], segments: [], keys: [] }]
}

function keyText(key: SegmentKey): string {
  return `${key.rank}:${key.order}:${key.literal}`
}

/** Runs `run`, giving an FwError without a location the route's (read only then: it is lazy). */
function withLocation<T>(record: RouteRecord, run: () => T): T {
  try {
    return run()
  } catch (error) {
    const location = error instanceof FwError && !error.location ? record.location : undefined
    if (location)
      throw new FwError((error as FwError).code, (error as FwError).message, {
        hint: (error as FwError).hint ?? '',
        location,
      })
    throw error
  }
}

function fail(
  code: ErrorCode,
  message: string,
  location: SourceLocation | undefined,
  hint: string,
): FwError {
  return new FwError(code, message, location ? { hint, location } : { hint })
}

function middlewareHint(aliases: Aliases): string {
  const custom = aliases.size ? `, or your own: ${[...aliases.keys()].join(', ')}` : ''
  return `Built-in aliases: auth, throttle:<max>,<seconds>, role:<roles>, verifySignedUrl, negotiate[:<locales>]${custom}. Register others with r.alias(name, fn).`
}

function label(record: RouteRecord): string {
  return `${record.method} ${record.host ? `${record.host} ` : ''}${record.path}`
}

function at(record: RouteRecord): string {
  return record.location ? `${record.location.file}:${record.location.line}` : `route #${record.id}`
}
