/**
 * The host groups of `index.mjs`: each domain group's Host regex, and per method the function
 * that tries the groups in precedence order (runs of hosts without parameters by one Map lookup).
 */
import { escapeRegExp, type Segment } from '../../shared/pattern.js'
import { canConsume } from '../../shared/regex-safety.js'
import type { MethodKey } from '../trie.js'
import { lit, propKey, safeComment, type CodeWriter } from './code.js'
import type { PlannedGroup } from './modules.js'

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

/** `const g<i>HOST = new RegExp(...)` of each domain group that is not in a run of static hosts. */
export function emitHostRegexes(
  out: CodeWriter,
  groups: readonly PlannedGroup[],
  runs: Map<PlannedGroup, number>,
): void {
  for (const group of groups) {
    if (group.host.pattern !== null && !runs.has(group))
      out.line(`const ${group.id}HOST = new RegExp(${lit(hostRegex(group.host.segments))})`)
  }
  out.line()
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
export function staticHostRuns(groups: readonly PlannedGroup[]): Map<PlannedGroup, number> {
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

/**
 * A method across host groups (`withMethod`: the groups that have it): domain routes first (in
 * precedence order), then hostless ones.
 */
export function emitHostDispatch(
  out: CodeWriter,
  withMethod: readonly PlannedGroup[],
  method: MethodKey,
  runs: Map<PlannedGroup, number>,
): void {
  const lookups = emitHostLookups(out, withMethod, method, runs)
  const name = method === 'HEAD' ? 'HEAD_ONLY' : method
  out.block(`function ${name}(path, host) {`, () => {
    for (const group of withMethod) {
      if (group.host.pattern === null) {
        out.line(`return ${group.id}${method}(path, undefined)`)
        return
      }
      const run = runs.get(group)
      if (run === undefined) emitHostTest(out, group, method)
      else if (lookups.get(run)![0] === group) emitHostLookup(out, run, lookups.get(run)!, method)
    }
    out.line('return null')
  })
  out.line()
}

/** The Map of each run of static hosts (`H<run><method>`); returns the runs' groups. */
function emitHostLookups(
  out: CodeWriter,
  withMethod: readonly PlannedGroup[],
  method: MethodKey,
  runs: Map<PlannedGroup, number>,
): Map<number, PlannedGroup[]> {
  const lookups = new Map<number, PlannedGroup[]>()
  for (const group of withMethod) {
    const run = runs.get(group)
    if (run !== undefined) lookups.set(run, [...(lookups.get(run) ?? []), group])
  }
  for (const [run, list] of lookups) {
    const entries = list.map((g) => `[${lit(staticHost(g))}, ${g.id}${method}]`)
    out.line(`const H${run}${method} = new Map([${entries.join(', ')}])`)
  }
  return lookups
}

function emitHostLookup(
  out: CodeWriter,
  run: number,
  list: readonly PlannedGroup[],
  method: MethodKey,
): void {
  out.line(`// ${list.length} hosts without parameters, one lookup`)
  out.block('{', () => {
    out.line(`const find = H${run}${method}.get(host)`)
    out.block('if (find !== undefined) {', () => {
      out.line('const r = find(path, undefined)')
      out.line('if (r !== null) return r')
    })
  })
}

function emitHostTest(out: CodeWriter, group: PlannedGroup, method: MethodKey): void {
  out.line(`// host ${safeComment(group.host.pattern!)}`)
  out.block('{', () => {
    out.line(`const hp = ${group.id}HOST.exec(host)`)
    out.block('if (hp !== null) {', () => {
      out.line(`const r = ${group.id}${method}(path, hp)`)
      out.line('if (r !== null) return r')
    })
  })
}
