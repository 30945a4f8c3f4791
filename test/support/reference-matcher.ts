/**
 * A deliberately simple reference matcher: one regex per route shape, tried in the documented
 * precedence order computed naively. The compiled matcher must agree with it on every lookup.
 *
 * Documented precedence (README "Matching precedence"):
 * - domain routes before routes without a domain; among domains, by their labels as below;
 * - then segment by segment: static < constrained (int, uuid, hex, slug, then custom regexes by
 *   first appearance in the route table) < plain parameter < catch-all (`.+` before `.*`);
 * - a shape that is a prefix of another comes first; registration order breaks ties;
 * - HEAD tries HEAD routes, then GET routes;
 * - paths are matched in RFC 3986 normal form (README "Parameters").
 */
import { parseHost, parsePath, type Segment } from '../../src/shared/pattern.js'
import type { RouteRecord } from '../../src/shared/route-record.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const BUILTIN_ORDER = ['int', 'uuid', 'hex', 'slug']

interface Shape {
  record: RouteRecord
  regex: RegExp
  params: Segment[]
  /** Index of each parameter's segment (for a catch-all, its first). */
  paramIndexes: number[]
  absent: string[]
  hostRegex: RegExp | null
  hostParams: Segment[]
  sortKey: number[][]
  hostKey: number[][] | null
}

type Params = Record<string, string | number | null>

export type ReferenceResult =
  { route: number; params: Params } | { status: number; allow?: string[] }

/** A compiled matcher's answer in the reference's form: the route's id and the params. */
export function asReferenceResult(
  actual: { route: { id: number }; params: object } | { status: number; allow?: string[] },
): ReferenceResult {
  return 'route' in actual
    ? { route: actual.route.id, params: { ...actual.params } as Params }
    : actual
}

export class ReferenceMatcher {
  readonly #shapes: Shape[] = []
  readonly #regexOrder: string[] = []
  /** Each method's shapes in precedence order, sorted when first needed. */
  readonly #byMethod = new Map<string, Shape[]>()

  constructor(records: readonly RouteRecord[]) {
    const parsed = records.map((record) => ({
      record,
      segments: parsePath(record.path),
      host: record.host === null ? null : parseHost(record.host),
    }))
    for (const { segments } of parsed) this.#noteRegexes(segments)
    for (const { host } of parsed) if (host) this.#noteRegexes(host)
    for (const { record, segments, host } of parsed) {
      const firstOptional = segments.findIndex((s) => s.kind === 'param' && s.optional)
      const ends = firstOptional === -1 ? [segments.length] : range(firstOptional, segments.length)
      for (const end of ends)
        this.#shapes.push(this.#shape(record, segments.slice(0, end), segments.slice(end), host))
    }
  }

  match(method: string, rawPath: string, rawHost = ''): ReferenceResult {
    if (!rawPath.startsWith('/')) return { status: 404 }
    const sent = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath
    const path = { normal: normalizeEscapes(sent), sent }
    const host = normalizeHost(rawHost)
    const hit = this.#find(method, path, host)
    if (hit !== null) return hit
    const allow = METHODS.filter((m) => this.#hasMethod(m) && this.#find(m, path, host) !== null)
    return allow.length > 0 ? { status: 405, allow } : { status: 404 }
  }

  #hasMethod(method: string): boolean {
    const wanted = method === 'HEAD' ? ['HEAD', 'GET'] : [method]
    return this.#shapes.some((s) => wanted.includes(s.record.method))
  }

  #find(method: string, path: RequestPath, host: string): ReferenceResult | null {
    const lists =
      method === 'HEAD' ? [this.#sorted('HEAD'), this.#sorted('GET')] : [this.#sorted(method)]
    for (const list of lists) {
      for (const shape of list) {
        const result = tryShape(shape, path, host)
        if (result !== null) return result
      }
    }
    return null
  }

  #sorted(method: string): Shape[] {
    let list = this.#byMethod.get(method)
    if (list === undefined) this.#byMethod.set(method, (list = this.#sort(method)))
    return list
  }

  #sort(method: string): Shape[] {
    return this.#shapes
      .filter((s) => s.record.method === method)
      .sort((a, b) => {
        if ((a.hostKey === null) !== (b.hostKey === null)) return a.hostKey === null ? 1 : -1
        const byHost = a.hostKey && b.hostKey ? compareKeyLists(a.hostKey, b.hostKey) : 0
        return byHost || compareKeyLists(a.sortKey, b.sortKey) || a.record.id - b.record.id
      })
  }

  #noteRegexes(segments: Segment[]): void {
    for (const s of segments) {
      if (s.kind === 'param' && s.type === 'regex' && !this.#regexOrder.includes(s.regex!)) {
        this.#regexOrder.push(s.regex!)
      }
    }
  }

  #shape(
    record: RouteRecord,
    segments: Segment[],
    dropped: Segment[],
    host: Segment[] | null,
  ): Shape {
    let source = ''
    for (const s of segments) {
      if (s.kind === 'static') source += '/' + escape(s.value)
      else if (s.type === 'catchall') source += s.allowEmpty ? '(?:/(.*))?' : '/(.+)'
      else source += '/([^/]+)'
    }
    if (segments.length === 0) source = '/'
    const hostSource = host
      ?.map((s) => (s.kind === 'static' ? escape(s.value) : '([^.]+)'))
      .join('\\.')
    return {
      record,
      regex: new RegExp(`^${source}$`, 'd'),
      params: segments.filter((s) => s.kind === 'param'),
      paramIndexes: segments.flatMap((s, i) => (s.kind === 'param' ? [i] : [])),
      absent: dropped.map((s) => (s as { name: string }).name),
      hostRegex: hostSource === undefined ? null : new RegExp(`^${hostSource}$`, 'd'),
      hostParams: host?.filter((s) => s.kind === 'param') ?? [],
      sortKey: segments.map((s) => this.#key(s)),
      hostKey: host ? host.map((s) => this.#key(s)) : null,
    }
  }

  /** [rank, order, literal char codes...] compared lexicographically. */
  #key(s: Segment): number[] {
    if (s.kind === 'static') return [0, 0, ...[...s.value].map((c) => c.charCodeAt(0))]
    if (s.type === 'string') return [2, 0]
    if (s.type === 'catchall') return [3, s.allowEmpty ? 1 : 0]
    if (s.type === 'regex') return [1, BUILTIN_ORDER.length + this.#regexOrder.indexOf(s.regex!)]
    return [1, BUILTIN_ORDER.indexOf(s.type)]
  }
}

/**
 * A request path as sent (trailing slash removed) and in normal form. Shapes match the normal
 * form; values are decoded from the text sent, so that an escape the normal form made up (`%4%32`
 * became `%42`) is not decoded a second time. Normalizing never adds or removes a '/', so the
 * segments of the two line up.
 */
interface RequestPath {
  normal: string
  sent: string
}

function tryShape(shape: Shape, path: RequestPath, host: string): ReferenceResult | null {
  let hostValues: RegExpExecArray | null = null
  if (shape.hostRegex) {
    hostValues = shape.hostRegex.exec(host)
    if (hostValues === null) return null
    const hostAt = (i: number): number => hostValues!.indices![i + 1]![0]
    if (!shape.hostParams.every((s, i) => satisfies(s, host, hostAt(i), hostValues![i + 1]!)))
      return null
  }
  const m = shape.regex.exec(path.normal)
  if (m === null) return null
  const sentSegments = path.sent.split('/').slice(1)
  const raw = shape.params.map((_, i) => m[i + 1] ?? '')
  const at = (i: number): number => m.indices![i + 1]?.[0] ?? path.normal.length
  if (!shape.params.every((s, i) => satisfies(s, path.normal, at(i), raw[i]!))) return null
  const params: Record<string, string | number | null> = {}
  shape.hostParams.forEach((s, i) => {
    const value = hostValues![i + 1]!
    params[(s as { name: string }).name] =
      (s as { type: string }).type === 'int' ? Number(value) : value
  })
  try {
    shape.params.forEach((s, i) => {
      const p = s as { name: string; type: string }
      const index = shape.paramIndexes[i]!
      const sent =
        p.type === 'catchall' ? sentSegments.slice(index).join('/') : sentSegments[index]!
      params[p.name] = p.type === 'int' ? Number(raw[i]) : decodeURIComponent(sent)
    })
  } catch {
    return { status: 400 }
  }
  for (const name of shape.absent) params[name] = null
  return { route: shape.record.id, params }
}

/**
 * Whether the segment's constraint matches `value`, the text at `at` in `text`: from there to
 * exactly the value's end, so that a lookbehind, `\b`, `^` or `$` sees the text around it (README).
 */
function satisfies(segment: Segment, text: string, at: number, value: string): boolean {
  if (segment.kind !== 'param' || segment.type === 'string' || segment.type === 'catchall')
    return true
  const rest = escape(text.slice(at + value.length))
  const sticky = new RegExp(`(?:${segment.regex})(?=${rest}$)`, 'y')
  sticky.lastIndex = at
  return sticky.test(text)
}

function compareKeyLists(a: number[][], b: number[][]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!
    if (x.length !== y.length) return x.length - y.length
  }
  return a.length - b.length
}

/**
 * RFC 3986 6.2.2, naively: escapes of unreserved characters decoded, the others' hex uppercased,
 * except that a hex digit right after a malformed '%' stays encoded: decoding `%33` in `%C%33`
 * would make up the escape `%C3`, which the client never sent.
 */
function normalizeEscapes(path: string): string {
  let out = ''
  for (const token of path.match(/%[0-9A-Fa-f]{2}|[^]/gu) ?? []) {
    if (token.length !== 3) {
      out += token
      continue
    }
    const char = String.fromCharCode(parseInt(token.slice(1), 16))
    const completesEscape = /^[0-9A-Fa-f]$/.test(char) && /%[0-9A-Fa-f]?$/.test(out)
    out += /^[A-Za-z0-9\-._~]$/.test(char) && !completesEscape ? char : token.toUpperCase()
  }
  return out
}

function normalizeHost(host: string): string {
  return host.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase()
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}
