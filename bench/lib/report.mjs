// Turns the collected results into tables (console and markdown), checks the targets and
// lists the problems. `runs[setId][mode][routerId]` is a worker message:
// { ok, version, results: { [case]: { status, ns, detail } } } or { ok: false, error }.

import { ROUTERS } from './adapters.mjs'

export const MODES = ['fresh', 'parsed', 'reused']
const PEERS = ROUTERS.filter((r) => r.id !== 'fw' && r.id !== 'baseline')

export const caseNames = (set) => [...set.cases.map((c) => c.name), 'mixed']

function entryOf(run, caseName) {
  if (!run) return undefined
  if (!run.ok) return { status: 'error', detail: run.error }
  return run.results[caseName]
}

const nsOf = (run, caseName) => {
  const entry = entryOf(run, caseName)
  return entry?.status === 'ok' ? entry.ns : null
}

export function formatNs(ns) {
  if (ns < 10) return ns.toFixed(2)
  if (ns < 100) return ns.toFixed(1)
  return String(Math.round(ns))
}

function cellText(entry) {
  if (!entry) return '—'
  if (entry.status !== 'ok') return entry.status
  return formatNs(entry.ns)
}

// The fastest peer (any router but fw and the baseline) on one case: { router, ns } or null.
export function fastestPeer(byRouter, caseName) {
  let best = null
  for (const router of PEERS) {
    const ns = nsOf(byRouter[router.id], caseName)
    if (ns !== null && (best === null || ns < best.ns)) best = { router, ns }
  }
  return best
}

function ratioText(byRouter, caseName) {
  const fwNs = nsOf(byRouter.fw, caseName)
  const best = fastestPeer(byRouter, caseName)
  if (fwNs === null || best === null) return '—'
  return `${(best.ns / fwNs).toFixed(2)}x`
}

// { header, rows } for one route set and string mode: router × case, ns per lookup (best round).
export function resultTable(set, byRouter) {
  const cases = caseNames(set)
  const rows = ROUTERS.filter((r) => byRouter[r.id]).map((r) => [
    r.label,
    ...cases.map((name) => cellText(entryOf(byRouter[r.id], name))),
  ])
  rows.push(['fastest peer', ...cases.map((name) => fastestPeer(byRouter, name)?.router.id ?? '—')])
  rows.push(['fastest peer ÷ fw', ...cases.map((name) => ratioText(byRouter, name))])
  return { header: ['router', ...cases], rows }
}

export function consoleTable({ header, rows }) {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)))
  const line = (row) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

// Numbers are right-aligned; `leftColumns` columns (from the left) are left-aligned.
export function markdownTable({ header, rows }, leftColumns = 1) {
  const line = (row) => `| ${row.join(' | ')} |`
  const align = header.map((_, i) => (i < leftColumns ? ':---' : '---:'))
  return [line(header), line(align), ...rows.map(line)].join('\n')
}

// Every (set, mode, case) where fw is not strictly the fastest router.
function casesFwLoses(sets, runs) {
  const losses = []
  for (const set of sets) {
    for (const mode of MODES) {
      const byRouter = runs[set.id]?.[mode] ?? {}
      if (!byRouter.fw?.ok) {
        losses.push(`set ${set.id}, ${mode}: fw not measured`)
        continue
      }
      for (const name of caseNames(set)) {
        const fwNs = nsOf(byRouter.fw, name)
        const best = fastestPeer(byRouter, name)
        if (fwNs === null)
          losses.push(`set ${set.id}, ${mode}, ${name}: fw ${cellText(entryOf(byRouter.fw, name))}`)
        else if (best && best.ns <= fwNs) {
          losses.push(
            `set ${set.id}, ${mode}, ${name}: ${best.router.label} ${formatNs(best.ns)} ns, fw ${formatNs(fwNs)} ns`,
          )
        }
      }
    }
  }
  return losses
}

const countCases = (sets, runs) =>
  sets.reduce((n, set) => n + caseNames(set).length * Object.keys(runs[set.id] ?? {}).length, 0)

const yesNo = (met) => (met === null ? 'not measured' : met ? '**met**' : '**not met**')

// The 2.5x target on set (a)'s mixed lookups in one string mode.
function mixedTarget(runs, mode, target) {
  const mixedA = runs.a?.[mode] ?? {}
  const fwMixed = nsOf(mixedA.fw, 'mixed')
  const best = fastestPeer(mixedA, 'mixed')
  const ratio = fwMixed !== null && best ? best.ns / fwMixed : null
  return {
    target,
    result:
      ratio === null
        ? 'fw or peers not measured'
        : `${ratio.toFixed(2)}x (fw ${formatNs(fwMixed)} ns, ${best.router.label} ${formatNs(best.ns)} ns)`,
    met: ratio === null ? null : ratio >= 2.5,
  }
}

// [{ target, result, met }]
export function evaluateTargets(sets, runs, scale) {
  const losses = casesFwLoses(sets, runs)
  const cold = scale?.cold
  const build = scale?.build
  return [
    mixedTarget(
      runs,
      'fresh',
      'set (a) mixed, fresh strings: fw ≥ 2.5x faster than the fastest peer',
    ),
    mixedTarget(runs, 'parsed', 'the same with parsed strings (new flat strings, as `req.url`)'),
    {
      target: 'fw fastest on every single case (both sets, every string mode)',
      result:
        losses.length === 0
          ? 'fastest everywhere'
          : `not fastest on ${losses.length} of ${countCases(sets, runs)} cases (listed below)`,
      met: runs.a?.fresh?.fw ? losses.length === 0 : null,
      details: losses,
    },
    {
      target: '10,000 routes: cold start < 30 ms (import + first match)',
      result: cold ? `${cold.importAndMatchMs.toFixed(1)} ms` : 'not measured',
      met: cold ? cold.importAndMatchMs < 30 : null,
    },
    {
      target: '10,000 routes: cold start < 30 ms (from process start, node boot included)',
      result: cold
        ? `${cold.sinceStartMs.toFixed(1)} ms (bare node: ${cold.bareNodeMs.toFixed(1)} ms)`
        : 'not measured',
      met: cold ? cold.sinceStartMs < 30 : null,
    },
    {
      target: '10,000 routes: `fw route:cache build` < 3 s (wall clock)',
      result: build ? `${(build.wallMs / 1000).toFixed(2)} s` : 'not measured',
      met: build ? build.wallMs < 3000 : null,
    },
  ].map((t) => ({ ...t, met: yesNo(t.met) }))
}

// Verification failures and router errors, deduplicated across the string modes.
export function problemList(sets, runs) {
  const seen = new Set()
  const problems = []
  for (const set of sets) {
    for (const mode of MODES) {
      for (const router of ROUTERS) {
        const run = runs[set.id]?.[mode]?.[router.id]
        if (!run) continue
        const failures = run.ok
          ? Object.entries(run.results).filter(([name, e]) => e.status !== 'ok' && name !== 'mixed')
          : [['(all cases)', { status: 'error', detail: run.error.split('\n')[0] }]]
        for (const [name, entry] of failures) {
          const line = `set (${set.id}), ${router.label}, ${name}: ${entry.status} — ${entry.detail}`
          if (!seen.has(line)) problems.push(line)
          seen.add(line)
        }
      }
    }
  }
  return problems
}
