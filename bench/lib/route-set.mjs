// Loads a route set from bench/routes/, checks it (no duplicate method+path, consistent param
// names), resolves each case's expected route to an index, and translates the neutral route
// syntax (`:name`, `*name`, constraints) into each router's own pattern syntax.

import setA from '../routes/set-a.mjs'
import setB from '../routes/set-b-hono.mjs'

export const ROUTE_SETS = { a: setA, b: setB }

// One segment of a neutral pattern: { kind: 'static' | 'param' | 'catchAll', text | name }.
export function parseSegments(path) {
  return path
    .split('/')
    .slice(1)
    .map((seg) => {
      if (seg.startsWith(':')) return { kind: 'param', name: seg.slice(1) }
      if (seg.startsWith('*')) return { kind: 'catchAll', name: seg.slice(1) }
      return { kind: 'static', text: seg }
    })
}

export function paramNames(route) {
  return parseSegments(route.path)
    .filter((s) => s.kind !== 'static')
    .map((s) => s.name)
}

// Throws on a duplicate method+path, or on two routes naming the param at the same position
// after the same static prefix differently (find-my-way and @medley/router reject that).
export function checkRouteSet(routes) {
  const seen = new Set()
  const namesAt = new Map()
  for (const route of routes) {
    const key = `${route.method} ${route.path}`
    if (seen.has(key)) throw new Error(`duplicate route ${key}`)
    seen.add(key)
    let prefix = ''
    for (const seg of parseSegments(route.path)) {
      if (seg.kind === 'static') {
        prefix += `/${seg.text}`
        continue
      }
      const other = namesAt.get(prefix)
      if (other !== undefined && other !== seg.name) {
        throw new Error(`param name conflict after ${prefix}: ${other} vs ${seg.name}`)
      }
      namesAt.set(prefix, seg.name)
      prefix += '/:'
    }
  }
}

function findRouteIndex(routes, [method, path]) {
  const index = routes.findIndex((r) => r.method === method && r.path === path)
  if (index < 0) throw new Error(`case refers to unknown route ${method} ${path}`)
  return index
}

// The set with each case's expected result resolved: { routeIndex | -1, params }.
export function loadRouteSet(id) {
  const set = ROUTE_SETS[id]
  if (!set) throw new Error(`unknown route set ${id}`)
  checkRouteSet(set.routes)
  const cases = set.cases.map((c) => ({
    ...c,
    routeIndex: c.route ? findRouteIndex(set.routes, c.route) : -1,
    params: c.params ?? {},
  }))
  return { ...set, cases }
}

// Pattern translators. Each receives a parsed segment and the route's constraints and
// returns that segment in the target router's syntax.
const SYNTAX = {
  fw(seg, constraints) {
    if (seg.kind === 'catchAll') return `{${seg.name}:.*}`
    const c = constraints[seg.name]
    return c ? `{${seg.name}:${c}}` : `{${seg.name}}`
  },
  findMyWay(seg, constraints) {
    if (seg.kind === 'catchAll') return '*'
    const c = constraints[seg.name]
    if (!c) return `:${seg.name}`
    return `:${seg.name}(^${c === 'int' ? '\\d+' : c}$)`
  },
  plain(seg) {
    return seg.kind === 'catchAll' ? '*' : `:${seg.name}`
  },
  rou3(seg, constraints) {
    if (seg.kind === 'catchAll') return `**:${seg.name}`
    const c = constraints[seg.name]
    if (!c) return `:${seg.name}`
    return `:${seg.name}(${c === 'int' ? '\\d+' : c})`
  },
  hono(seg, constraints) {
    if (seg.kind === 'catchAll') return `:${seg.name}{.+}`
    const c = constraints[seg.name]
    if (!c) return `:${seg.name}`
    return `:${seg.name}{${c === 'int' ? '[0-9]+' : c}}`
  },
}

export function toSyntax(route, syntax) {
  const translate = SYNTAX[syntax]
  const constraints = route.constraints ?? {}
  const segments = parseSegments(route.path).map((seg) =>
    seg.kind === 'static' ? seg.text : translate(seg, constraints),
  )
  return `/${segments.join('/')}`
}

// Name of the catch-all param of a route, or undefined.
export function catchAllName(route) {
  return parseSegments(route.path).find((s) => s.kind === 'catchAll')?.name
}
