/**
 * Which requests share a throttle layer's counter.
 *
 * The kernel calls a middleware factory once per route per alias, and pre/post-global ones once,
 * but tells the factory nothing about where the alias came from. The rule, applied on a layer's
 * first request and cached (a layer instance always sits at the same place):
 *
 * - before routing (no `route.name` attribute yet): a pre-global layer, one counter for all
 *   routes, told apart from other pre-global throttles by position;
 * - after routing, the k-th throttle layer of the request is the k-th throttle alias in the
 *   route's middleware list (position p); past the list's throttles it is post-global;
 * - position p belongs to a group when every route of some enclosing group has the same
 *   middleware up to and including p: that is exactly what a group's middleware produces. The
 *   outermost such group owns the counter (`g<scope>.<p>`), shared by all its routes; otherwise
 *   the route does (`r<p>:<route name>`).
 *
 * One case is ambiguous without the kernel's help: if every route of a group repeats the same
 * route-level throttle at the same position, their counters are shared as if the group had it.
 * When route records carry `middlewareScopes` (the scope id that contributed each entry, -1 for
 * the route's own), that exact origin is used instead of the inference.
 *
 * A throttle alias is also any alias the routes file registered that names it, as the kernel
 * resolves it (`r.alias('limit', 'throttle:5,60')`, used as `limit` or `limit:10,60`): counted as
 * another middleware, such a layer took the scope of the route's next `throttle` entry, or a
 * post-global one shared by every route that used it.
 */
import { followAlias } from '../shared/middleware-aliases.js'
import type { RouteRecord } from '../shared/route-record.js'
import type { KernelServices } from '../runtime/types.js'

/** The parts of the kernel's compiled router this file reads (the Kernel exposes `router`). */
interface RouteTable {
  records: readonly RouteRecord[] | null
  match(
    method: string,
    path: string,
    host?: string | null,
  ): { route: { id: number } } | { status: number }
}

/** A route record, possibly annotated with the scope that contributed each middleware entry. */
type AnnotatedRecord = RouteRecord & { middlewareScopes?: readonly number[] }

/** Where one request met the layer: before routing, or its route and throttle index k. */
export interface LayerSite {
  routed: boolean
  method: string
  path: string
  host: string
  /** Throttle layers of the same phase (pre-global, or after routing) that ran before this one. */
  index: number
}

const groupIndexes = new WeakMap<readonly RouteRecord[], GroupIndex>()

/**
 * Names the counter scope of a layer at `site`: `pre<k>`, `g<scope>.<p>`, `r<p>:<route>`,
 * or `post<j>`.
 * @example
 * layerScope(kernel, 'throttle', { routed: true, method: 'GET', path: '/api/v1/limited', host: 'localhost', index: 1 })
 * // 'r1:v1.limited'
 */
export function layerScope(kernel: KernelServices, alias: string, site: LayerSite): string {
  if (!site.routed) return `pre${site.index}`
  const found = routeAt(kernel, site)
  if (!found) return `r${site.index}:${site.method} ${site.host}${site.path}`
  const { records, record } = found
  const throttles = throttleEntries(kernel, alias, record.middleware)
  const position = throttles[site.index]?.position ?? -1
  if (position === -1) return `post${site.index - throttles.length}`
  const group = record.middlewareScopes
    ? exactOrigin(record, position)
    : inferredGroup(records, record, position)
  return group === null ? `r${position}:${routeIdentity(record)}` : `g${group}.${position}`
}

/** A throttle layer of the route that runs after the one at a site: its parameters and scope. */
export interface LaterLayer {
  params: string[]
  scope: string
}

/**
 * The throttle layers the route's own middleware list has after the layer at `site` (none
 * before routing, nor when the kernel exposes no route table).
 * @example
 * laterLayers(kernel, 'throttle', { routed: true, method: 'GET', path: '/api/v1/limited', host: 'localhost', index: 0 })
 * // [{ params: ['5', '60'], scope: 'r1:v1.limited' }]
 */
export function laterLayers(kernel: KernelServices, alias: string, site: LayerSite): LaterLayer[] {
  const record = site.routed ? routeAt(kernel, site)?.record : undefined
  if (!record) return []
  const later = throttleEntries(kernel, alias, record.middleware).slice(site.index + 1)
  return later.map(({ params }, i) => ({
    params,
    scope: layerScope(kernel, alias, { ...site, index: site.index + 1 + i }),
  }))
}

/** A throttle entry of a route's middleware list: its position and the parameters it stands for. */
interface ThrottleEntry {
  position: number
  params: string[]
}

function throttleEntries(
  kernel: KernelServices,
  alias: string,
  middleware: RouteRecord['middleware'],
): ThrottleEntry[] {
  const aliases = (kernel as unknown as { router?: { registrar?: { aliases?: AliasMap } | null } })
    .router?.registrar?.aliases
  const entries: ThrottleEntry[] = []
  middleware.forEach((ref, position) => {
    const params = throttleParams(ref, alias, aliases)
    if (params !== null) entries.push({ position, params })
  })
  return entries
}

type AliasMap = ReadonlyMap<string, unknown>

/**
 * The parameters of `ref` when it is this throttle, resolved as the kernel does (followAlias: an
 * alias registered with r.alias first, else the alias itself); null for any other middleware.
 */
function throttleParams(
  ref: unknown,
  alias: string,
  aliases: AliasMap | undefined,
): string[] | null {
  if (typeof ref !== 'string') return null
  const target = aliases === undefined ? ref : followAlias(ref, aliases)
  if (typeof target !== 'string') return null
  const colon = target.indexOf(':')
  const name = colon === -1 ? target : target.slice(0, colon)
  if (name !== alias) return null
  return colon === -1 ? [] : target.slice(colon + 1).split(',')
}

function routeAt(
  kernel: KernelServices,
  site: LayerSite,
): { records: readonly RouteRecord[]; record: AnnotatedRecord } | null {
  const table = (kernel as unknown as { router?: Partial<RouteTable> }).router
  const records = table?.records
  const found = records && table.match ? table.match(site.method, site.path, site.host) : null
  const record =
    found && 'route' in found
      ? (records![found.route.id] as AnnotatedRecord | undefined)
      : undefined
  return record ? { records: records!, record } : null
}

function exactOrigin(record: AnnotatedRecord, position: number): number | null {
  const origin = record.middlewareScopes![position]
  return origin === undefined || origin < 0 ? null : origin
}

function inferredGroup(
  records: readonly RouteRecord[],
  record: RouteRecord,
  position: number,
): number | null {
  let index = groupIndexes.get(records)
  if (!index) groupIndexes.set(records, (index = new GroupIndex(records)))
  return index.ownerOf(record, position)
}

function routeIdentity(record: RouteRecord): string {
  return record.name ?? `${record.method} ${record.host ?? ''}${record.path}`
}

/** For each group scope, how long a middleware prefix all of its routes share. */
class GroupIndex {
  readonly #shared = new Map<number, { first: RouteRecord; length: number }>()

  constructor(records: readonly RouteRecord[]) {
    for (const record of records) {
      for (const scope of record.scopes) {
        if (scope === 0) continue // the file itself: never a group with middleware
        const seen = this.#shared.get(scope)
        if (!seen) this.#shared.set(scope, { first: record, length: record.middleware.length })
        else
          seen.length = Math.min(
            seen.length,
            commonPrefix(seen.first.middleware, record.middleware),
          )
      }
    }
  }

  /** The outermost group whose routes all share `record`'s middleware through `position`. */
  ownerOf(record: RouteRecord, position: number): number | null {
    for (const scope of record.scopes) {
      if (scope !== 0 && (this.#shared.get(scope)?.length ?? 0) > position) return scope
    }
    return null
  }
}

function commonPrefix(a: readonly unknown[], b: readonly unknown[]): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}
