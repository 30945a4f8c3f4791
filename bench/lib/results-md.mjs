// Writes the markdown of bench/RESULTS.md from a finished run: machine, targets, one table
// per route set and string mode, the fw 10,000-route numbers, and notes.

import { ROUTERS } from './adapters.mjs'
import { machineLines } from './machine.mjs'
import {
  MODES,
  evaluateTargets,
  formatNs,
  markdownTable,
  problemList,
  resultTable,
} from './report.mjs'

const MODE_TITLES = {
  fresh: 'fresh string per lookup (sliced)',
  parsed: 'parsed string per lookup (new flat string, as `req.url`)',
  reused: 'one reused constant string',
}

const METHOD_NOTES = `- Every router runs in its own child process (\`bench/worker.mjs\`), one process per
  router × route set × string mode, so no two routers (or string modes) share JIT state.
- Before timing, every case is verified in every string mode: the matched route (by index /
  route name) and the params, compared as strings. A router that fails a case shows \`wrong\`
  there and is not timed on it; \`mixed\` is only timed when every case is right.
- Then the router is warmed up on all cases round robin (300 ms), so each case is timed in the
  state a server that sees mixed traffic is in. \`mixed\` (all cases round robin, one pass divided
  by the number of cases) and each case are timed with mitata's \`measure()\` (the function
  \`bench()\`/\`run()\` call; fast functions are sampled in batches of 4096 calls) in 5 interleaved
  rounds of 60 ms — round 1 of \`mixed\` and of every case, then round 2, ... — each round giving
  the median (p50) ns per lookup; the number reported is the lowest round. This VM's speed flips
  between states within a second (see Noise below), and the best of interleaved rounds compares
  every router and case in the same, quiet state. \`mixed\` also swings between processes (JIT
  luck), so it is timed in 2 more processes per router, run after all routers' first ones, and
  the median of the 3 is reported (all 3 are listed below the set tables).
- **fresh**: each lookup gets a string object that did not exist before: \`base.slice(from)\` of
  the path behind a fixed prefix. V8 returns a new SlicedString (or a new flat copy under 13
  chars) with no cached hash and not internalized — what a router gets when the path is cut from
  a longer string, as from a URL with a query string. Slicing, not concatenation: a
  concatenation gives a ConsString the router would have to flatten (allocate + copy) first, a
  cost real URLs never have. **parsed**: each lookup gets a new flat (sequential) string made
  from bytes, the kind Node's HTTP parser makes for \`req.url\` (with no query string the path is
  \`req.url\` itself); the strings are made by mitata before each batch of calls (its computed
  parameters), so making them is not timed. The two fresh modes differ because V8 compares a
  SlicedString with \`===\` in its runtime (~50 ns for 20 characters, ~5 ns flat) and reads each
  character through the slice. **reused**: the same literal (internalized) string every time,
  like most published router benchmarks; V8 then caches its hash, its internalized copy and
  \`String#split\` results, which flatters routers that split or use the path as an object key.
- The \`(string + call only)\` row is a pseudo-router returning the path: the cost of making the
  string (not timed in parsed mode), the call and \`do_not_optimize\`. It is included in every
  other number (not subtracted).
- \`fastest peer ÷ fw\`: above 1 means fw is faster by that factor.
- Noise: on the 2-core VM these numbers were taken on, the speed of a process varies with the
  core it runs on and the moment (a plain arithmetic loop: 0.56–0.75 ns per iteration), and
  lookups vary more: fw's set (a) \`mixed\` measured 68 and 134 ns in consecutive 150 ms rounds
  of one process, and 61–116 ns across processes of one build (code-heavy routers like fw's
  generated matcher swing the most). Before the best-of-rounds protocol a single 300 ms median
  per cell reported whichever state it mostly ran in. Compare routers within one run, and read
  a difference under ~20% in a single cell as noise.`

const STATIC_NOTES = `- find-my-way 9.10.1 (installed) **has** \`compile()\` ("Compiler mode" in its README): it is
  measured as its own row, using \`find()\` like the plain row.
- @medley/router and memoirist have no param constraints: the int and regex routes are plain
  params there (the cases still verify, the values are the same strings). find-my-way, rou3 and
  Hono use regex constraints; fw uses \`{id:int}\` (its value comes back as a number).
- Catch-alls: fw \`{path:.*}\`, find-my-way / medley / memoirist \`*\` (reported as \`*\`, renamed
  to \`path\` for verification only), rou3 \`**:path\`, Hono \`:path{.+}\`.
- @medley/router matches the path only; the method check on the returned store is part of its
  timed lookup.
- Hono RegExpRouter returns params as indexes into a match array (Hono resolves them lazily);
  its lookup does not build a params object, the others do.
- rou3 \`compileRouterToString\` output is written to \`bench/.tmp/rou3-string-<set>.mjs\` and
  imported, as an ahead-of-time build would do.
- Set (a): the Parse.com (\`/1/...\`) and Google+ (\`/people\`, \`/activities\`, \`/comments\`,
  \`/moments\`) lists share no path and no first segment with the GitHub list, so no \`/parse\` or
  \`/gplus\` prefix was needed; \`checkRouteSet()\` checks for duplicate method+path and for param
  names that differ at the same position. The API lists have at most two static segments: the
  "deep static" case is \`/search/repositories\`.
- fw's \`miss\` numbers include working out 404 versus 405: a miss walks one merged
  any-method trie (and only when that matches, each method's to build the Allow list). The peers
  return a bare no-match.
- Set (b) has no route with two params; its "several params" column is replaced by Hono's own
  lookups (same-radix static, param + static, POST).`

function machineSection(machine, versions) {
  return machineLines(machine, 'Routers', versions).join('\n')
}

function targetsSection(sets, runs, scale) {
  const targets = evaluateTargets(sets, runs, scale)
  const rows = targets.map((t) => [t.target, t.result, t.met])
  const parts = [
    '## Targets',
    '',
    markdownTable({ header: ['target', 'result', 'status'], rows }, 3),
  ]
  const details = targets.flatMap((t) => t.details ?? [])
  if (details.length)
    parts.push('', 'Cases where fw is not the fastest:', '', ...details.map((d) => `- ${d}`))
  return parts.join('\n')
}

function setSection(set, runs, fwBuild) {
  const lookups = set.cases.map((c) => `${c.name} \`${c.method} ${c.path}\``).join(', ')
  const parts = [`## Set (${set.id}): ${set.title}`, '', `${set.routes.length} routes.`]
  parts.push(`Lookups: ${lookups}; mixed = all of them round robin.`)
  if (fwBuild) parts.push(`fw build: ${fwBuildText(fwBuild)}.`)
  for (const mode of MODES) {
    const byRouter = runs[set.id]?.[mode]
    if (!byRouter) continue
    parts.push('', `### ${MODE_TITLES[mode]} (ns per lookup: best of 5 rounds, each a median)`, '')
    parts.push(markdownTable(resultTable(set, byRouter)))
  }
  return parts.join('\n')
}

// Router × (set, mode): the mixed result of each process, median first.
function mixedSpreadSection(sets, runs) {
  const columns = sets.flatMap((set) => MODES.map((mode) => ({ set, mode })))
  const rows = ROUTERS.filter((r) => r.id !== 'baseline').map((router) => [
    router.label,
    ...columns.map(({ set, mode }) => {
      const mixed = runs[set.id]?.[mode]?.[router.id]
      const samples = mixed?.ok ? mixed.results.mixed.samples : null
      return samples ? samples.map(formatNs).join(' / ') : '—'
    }),
  ])
  const header = ['router', ...columns.map(({ set, mode }) => `set ${set.id}, ${mode}`)]
  return [
    '## Mixed: one number per process',
    '',
    'The mixed median above is the median of these (ns per lookup; first = the full worker).',
    'The spread between processes of the same router is JIT luck, not noise within a run.',
    '',
    markdownTable({ header, rows }),
  ].join('\n')
}

function fwBuildText(build) {
  if (!build.ok) return `failed (${build.output.split('\n')[0]})`
  const printed = build.printedMs === null ? 'no ms printed' : `prints ${build.printedMs} ms`
  return `${Math.round(build.wallMs)} ms wall clock, ${printed}`
}

const ms = (value) => `${value.toFixed(1)} ms`
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`
const codeBlock = (text) => ['```', text, '```'].join('\n')

function scaleRows({ build, cold, verify, size, probe }) {
  const printed = build.printedMs === null ? 'none printed' : `${build.printedMs} ms`
  return [
    [
      `\`fw route:cache build\`, wall clock (median of ${build.runs})`,
      `${Math.round(build.wallMs)} ms`,
    ],
    ['build time the CLI prints', printed],
    [`cold start from process start (median of ${cold.runs})`, ms(cold.sinceStartMs)],
    ['bare `node` start, no import (for comparison)', ms(cold.bareNodeMs)],
    ['import router.mjs + first match', ms(cold.importAndMatchMs)],
    ['heap used by the router (gc, delta)', mib(cold.heapDeltaBytes)],
    ['generated code', `${mib(size.bytes)} in ${size.files} files`],
    [`first match (probe \`${probe}\`)`, cold.firstMatch ?? 'no match'],
    ['sample requests matched correctly', `${verify.checked - verify.wrong} / ${verify.checked}`],
  ]
}

function scaleSection(scale) {
  const parts = ['## fw with 10,000 routes', '']
  if (!scale) return [...parts, 'Not run.'].join('\n')
  if (scale.error) return [...parts, 'Build failed:', '', codeBlock(scale.error)].join('\n')
  parts.push(`${scale.routes} generated routes (\`bench/routes/scale-10k.mjs\`), clean builds.`, '')
  parts.push(markdownTable({ header: ['measure', 'value'], rows: scaleRows(scale) }))
  const { verify, build } = scale
  if (verify.wrong > 0) {
    parts.push(
      '',
      'Wrong matches (first 5):',
      '',
      codeBlock(JSON.stringify(verify.examples, null, 2)),
    )
  }
  parts.push('', 'CLI output of the last build:', '', codeBlock(build.output || '(nothing)'))
  return parts.join('\n')
}

function notesSection(sets, runs) {
  const problems = problemList(sets, runs)
  const list = problems.length ? problems.map((p) => `- ${p}`).join('\n') : '- none'
  return [
    '## Notes',
    '',
    '### Verification failures and errors',
    '',
    list,
    '',
    '### Setup',
    '',
    STATIC_NOTES,
  ].join('\n')
}

export function resultsMarkdown({
  machine,
  versions,
  sets,
  runs,
  fwBuilds,
  scale,
  quick,
  elapsedS,
}) {
  const intro = [
    '# Routing benchmark results',
    '',
    `Written by \`npm run bench\` (\`node bench/run.mjs\`) in ${elapsedS.toFixed(0)} s${quick ? ' — QUICK smoke run, numbers are rough' : ''}.`,
    'Lower is better. Re-run with `npm run bench`; `node bench/run.mjs --quick` for a smoke run.',
    'The HTTP and throttle benchmarks (`node bench/run.mjs --http`, `--throttle`, both also part of',
    '`npm run bench`) write their own sections at the end of this file:',
    '[HTTP benchmark results](#http-benchmark-results), [Throttle benchmark results](#throttle-benchmark-results).',
  ].join('\n')
  return (
    [
      intro,
      machineSection(machine, versions),
      targetsSection(sets, runs, scale),
      '## How it is measured\n\n' + METHOD_NOTES,
      ...sets.map((set) => setSection(set, runs, fwBuilds[set.id])),
      mixedSpreadSection(sets, runs),
      scaleSection(scale),
      notesSection(sets, runs),
    ].join('\n\n') + '\n'
  )
}

// Installed version of each package measured, e.g. { 'find-my-way': '9.10.1', ... }.
export const routerVersions = (runs) => {
  const versions = {}
  for (const byMode of Object.values(runs)) {
    for (const byRouter of Object.values(byMode)) {
      for (const router of ROUTERS) {
        const run = byRouter[router.id]
        if (run?.ok && router.pkg) versions[router.pkg] = run.version
      }
    }
  }
  return versions
}
