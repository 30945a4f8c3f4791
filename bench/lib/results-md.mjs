// Writes the markdown of bench/RESULTS.md from a finished run: machine, targets, one table
// per route set and string mode, the fw 10,000-route numbers, and notes.

import { ROUTERS } from './adapters.mjs'
import { MODES, evaluateTargets, markdownTable, problemList, resultTable } from './report.mjs'

const MODE_TITLES = {
  fresh: 'fresh string per lookup',
  reused: 'one reused constant string',
}

const METHOD_NOTES = `- Every router runs in its own child process (\`bench/worker.mjs\`), one process per
  router × route set × string mode, so no two routers (or string modes) share JIT state.
- Before timing, every case is verified in both string modes: the matched route (by index /
  route name) and the params, compared as strings. A router that fails a case shows \`wrong\`
  there and is not timed on it; \`mixed\` is only timed when every case is right.
- Then the router is warmed up on all cases round robin (300 ms), so each case is timed in the
  state a server that sees mixed traffic is in. Each case is timed with mitata's \`measure()\`
  (the function \`bench()\`/\`run()\` call) with its defaults (≥ 642 ms of samples, batches
  of 4096 calls); the number is the median (p50) ns per lookup. \`mixed\` is one pass over
  all cases divided by the number of cases.
- **fresh**: each lookup gets a string object that did not exist before, as a server gets a new
  \`req.url\` from the HTTP parser: \`base.slice(from)\` of the path behind a fixed prefix. V8
  returns a new SlicedString (or a new flat copy under 13 chars) with no cached hash and not
  internalized. Slicing, not concatenation: a concatenation gives a ConsString the router would
  have to flatten (allocate + copy) first, a cost real URLs never have. **reused**: the same
  literal (internalized) string every time, like most published router benchmarks; V8 then
  caches its hash, its internalized copy and \`String#split\` results, which flatters routers that
  split or use the path as an object key.
- The \`(string + call only)\` row is a pseudo-router returning the path: the cost of making the
  string, the call and \`do_not_optimize\`. It is included in every other number (not subtracted).
- \`fastest peer ÷ fw\`: above 1 means fw is faster by that factor.`

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
- Set (b) has no route with two params; its "several params" column is replaced by Hono's own
  lookups (same-radix static, param + static, POST).`

function machineSection(machine, versions) {
  const list = Object.entries(versions)
    .map(([label, v]) => `${label} ${v}`)
    .join(', ')
  return [
    '## Machine',
    '',
    `- CPU: ${machine.cpu} (${machine.cores} cores), ${machine.memoryGiB} GiB RAM`,
    `- OS: ${machine.os}`,
    `- Node ${machine.node}`,
    `- Date: ${machine.date}`,
    `- Routers: ${list}`,
  ].join('\n')
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
    parts.push('', `### ${MODE_TITLES[mode]} (median ns per lookup)`, '')
    parts.push(markdownTable(resultTable(set, byRouter)))
  }
  return parts.join('\n')
}

function fwBuildText(build) {
  if (!build.ok) return `failed (${build.output.split('\n')[0]})`
  const printed = build.printedMs === null ? 'no ms printed' : `prints ${build.printedMs} ms`
  return `${Math.round(build.wallMs)} ms wall clock, ${printed}`
}

function scaleSection(scale) {
  const head = ['## fw with 10,000 routes', '']
  if (!scale) return [...head, 'Not run.'].join('\n')
  if (scale.error) return [...head, 'Build failed:', '', '```', scale.error, '```'].join('\n')
  const { build, cold, verify } = scale
  const rows = [
    [
      `\`fw route:cache build\`, wall clock (median of ${build.runs})`,
      `${Math.round(build.wallMs)} ms`,
    ],
    [
      'build time the CLI prints',
      build.printedMs === null ? 'none printed' : `${build.printedMs} ms`,
    ],
    [
      `cold start from process start (median of ${cold.runs})`,
      `${cold.sinceStartMs.toFixed(1)} ms`,
    ],
    ['  of which bare node start (no import)', `${cold.bareNodeMs.toFixed(1)} ms`],
    ['import router.mjs + first match', `${cold.importAndMatchMs.toFixed(1)} ms`],
    [
      'heap used by the router (after gc, delta)',
      `${(cold.heapDeltaBytes / 2 ** 20).toFixed(2)} MiB`,
    ],
    ['first match (probe ' + `\`${scale.probe}\`)`, cold.firstMatch ?? 'no match'],
    ['sample requests matched correctly', `${verify.checked - verify.wrong} / ${verify.checked}`],
  ]
  const parts = [...head, `${scale.routes} generated routes (\`bench/routes/scale-10k.mjs\`).`, '']
  parts.push(markdownTable({ header: ['measure', 'value'], rows }))
  if (verify.wrong > 0)
    parts.push(
      '',
      'Wrong matches (first 5):',
      '',
      '```',
      JSON.stringify(verify.examples, null, 2),
      '```',
    )
  parts.push('', 'CLI output of the last build:', '', '```', build.output || '(nothing)', '```')
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
  ].join('\n')
  return (
    [
      intro,
      machineSection(machine, versions),
      targetsSection(sets, runs, scale),
      '## How it is measured\n\n' + METHOD_NOTES,
      ...sets.map((set) => setSection(set, runs, fwBuilds[set.id])),
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
