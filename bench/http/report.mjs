// Tables, targets and the markdown of the HTTP benchmark's section of bench/RESULTS.md.

import { spawnSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../lib/fw.mjs'
import { consoleTable, markdownTable } from '../lib/report.mjs'
import { machineLines } from '../lib/machine.mjs'
import { CONNECTIONS, PIPELINING } from './load.mjs'
import { ECHO_BODY, FILLER_ROUTES } from './scenarios.mjs'

const pkgVersion = (name) =>
  JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version

export function gitHead() {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
  const dirty = spawnSync('git', ['status', '--porcelain', 'src'], { cwd: ROOT, encoding: 'utf8' })
  const sha = head.status === 0 ? head.stdout.trim() : 'unknown'
  return dirty.status === 0 && dirty.stdout.trim() ? `${sha} (src/ has uncommitted changes)` : sha
}

// When dist/ was last built (by `npm run build`; others may rebuild it while we run).
export function distBuilt() {
  try {
    return statSync(join(ROOT, 'dist', 'runtime', 'kernel.js')).mtime
  } catch {
    return null
  }
}

const utc = (date) =>
  date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : 'missing'

export function distText({ before, after }) {
  if (before?.getTime() === after?.getTime()) return `dist/ built ${utc(before)}`
  return `dist/ was REBUILT during the run (${utc(before)} → ${utc(after)}): servers started after the rebuild ran the newer code`
}

export function httpVersions() {
  const fw = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
  const names = ['fastify', 'express', 'hono', '@hono/node-server', 'autocannon']
  return { fw, ...Object.fromEntries(names.map((n) => [n, pkgVersion(n)])) }
}

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const us = (n) => fmt(n, n < 100 ? 1 : 0)
const ms = (n) => (n < 10 ? n.toFixed(1) : fmt(n))

function cell(entry, text) {
  if (!entry) return '—'
  if (entry.status !== 'ok') return entry.status
  return text(entry)
}

// server × scenario table of one figure.
function figureTable({ options, runs }, text) {
  const rows = options.servers.map((server) => [
    server.label,
    ...options.scenarios.map((s) => cell(runs[s.id]?.[server.id], text)),
  ])
  return { header: ['server', ...options.scenarios.map((s) => s.id)], rows }
}

export const cpuTable = (result) => figureTable(result, (e) => us(e.cpuUs))
export const rpsTable = (result) => figureTable(result, (e) => fmt(e.rps))
export const latencyTable = (result) => figureTable(result, (e) => `${ms(e.p50)} / ${ms(e.p99)}`)

const cpuOf = (runs, scenario, server) => {
  const entry = runs[scenario]?.[server]
  return entry?.status === 'ok' ? entry.cpuUs : null
}

const status = (met) => (met === null ? 'not measured' : met ? '**met**' : '**not met**')

// fw = the default kernel (built-ins on); fw (builtins off) is reported alongside.
export function evaluateHttpTargets({ options, runs }) {
  const ids = options.scenarios.map((s) => s.id)
  const pair = (scenario, a, b) => {
    const x = cpuOf(runs, scenario, a)
    const y = cpuOf(runs, scenario, b)
    return x === null || y === null ? null : { x, y, ratio: x / y }
  }
  const line = (p, other) =>
    `fw ${us(p.x)} µs vs ${other} ${us(p.y)} µs (fw ÷ ${other} = ${p.ratio.toFixed(2)})`
  const off = (scenario, b) => {
    const p = pair(scenario, 'fw-nobuiltins', b)
    return p ? `; fw (builtins off) ${us(p.x)} µs (${p.ratio.toFixed(2)})` : ''
  }

  const perScenario = ids.map((id) => ({ id, p: pair(id, 'fw', 'fastify') }))
  const measured = perScenario.filter(({ p }) => p)
  const offRatio = (id) => pair(id, 'fw-nobuiltins', 'fastify')?.ratio.toFixed(2) ?? '—'
  const every = {
    target: 'fw server CPU per request ≤ Fastify’s in every scenario',
    result: measured.length
      ? 'fw ÷ Fastify: ' +
        measured.map(({ id, p }) => `${id} ${p.ratio.toFixed(2)}`).join(', ') +
        ` (builtins off: ${measured.map(({ id }) => `${id} ${offRatio(id)}`).join(', ')})`
      : 'not measured',
    met: measured.length === ids.length ? measured.every(({ p }) => p.ratio <= 1) : null,
  }
  const routes = pair('routes', 'fw', 'fastify')
  const many = {
    target: `fw server CPU per request ≥ 15% lower than Fastify’s among ${FILLER_ROUTES.length + 1} routes`,
    result: routes ? line(routes, 'Fastify') + off('routes', 'fastify') : 'not measured',
    met: routes ? routes.ratio <= 0.85 : null,
  }
  const hello = pair('hello', 'fw', 'node')
  const bare = {
    target: 'fw server CPU per request within 10% of bare node:http on hello',
    result: hello ? line(hello, 'node:http') + off('hello', 'node') : 'not measured',
    met: hello ? hello.ratio <= 1.1 : null,
  }
  return [every, many, bare].map((t) => ({ ...t, status: status(t.met) }))
}

export function printHttpSummary(result) {
  console.log('\nHTTP: server CPU µs per request (median over rounds; lower is better)\n')
  console.log(consoleTable(cpuTable(result)))
  console.log('\nHTTP: requests/s (median over rounds)\n')
  console.log(consoleTable(rpsTable(result)))
  console.log('\nHTTP: latency p50 / p99, ms (median over rounds)\n')
  console.log(consoleTable(latencyTable(result)))
  console.log('\nHTTP targets')
  for (const t of evaluateHttpTargets(result)) {
    console.log(`  ${t.status.replaceAll('*', '').padEnd(12)} ${t.target}: ${t.result}`)
  }
  const problems = problemList(result)
  if (problems.length) console.log(`\nProblems\n${problems.map((p) => `  ${p}`).join('\n')}`)
}

function problemList({ options, runs }) {
  const problems = []
  for (const scenario of options.scenarios) {
    for (const server of options.servers) {
      const entry = runs[scenario.id]?.[server.id]
      if (!entry) continue
      if (entry.status !== 'ok')
        problems.push(`${scenario.id}, ${server.label}: ${entry.status} — ${entry.error}`)
      else if (entry.non2xx > 0)
        problems.push(
          `${scenario.id}, ${server.label}: ${entry.non2xx} non-2xx answers or errors while timed`,
        )
    }
  }
  return problems
}

// One table per scenario: every round's CPU µs/req and req/s, in the order they ran.
function roundsSection({ options, runs }) {
  const parts = ['## Every round', '', 'CPU µs per request / requests per second, per round.', '']
  const header = ['server', ...Array.from({ length: options.rounds }, (_, i) => `round ${i + 1}`)]
  for (const scenario of options.scenarios) {
    const rows = options.servers.map((server) => {
      const entry = runs[scenario.id]?.[server.id]
      const rounds = entry?.status === 'ok' ? entry.rounds : []
      return [
        server.label,
        ...header
          .slice(1)
          .map((_, i) =>
            rounds[i] ? `${us(rounds[i].cpuUs)} / ${fmt(rounds[i].rps)}` : (entry?.status ?? '—'),
          ),
      ]
    })
    parts.push(`### ${scenario.id}`, '', markdownTable({ header, rows }), '')
  }
  return parts.join('\n').trimEnd()
}

function methodNotes(options, pinning) {
  return `- Every server runs in its own child process (\`bench/http/server-child.mjs\`) on
  127.0.0.1, port 0, with \`NODE_ENV=production APP_ENV=production\` (and a URL signing key,
  which fw requires in production). autocannon ${pkgVersion('autocannon')} runs in the parent
  process, never in a server process: ${CONNECTIONS} connections, pipelining ${PIPELINING},
  ${options.durationS} s per timed run.
- ${
    pinning
      ? `CPU pinning (\`taskset\`, \`bench/http/pin.mjs\`): every server process on CPU ${pinning.server},
  autocannon on CPU ${pinning.load}. Unpinned, the scheduler moved both between this VM's cores,
  whose speeds differ, and one server's CPU per request swung by up to ±40% between rounds;
  pinned, every server is timed on the same core and its rounds agree within ~5%.`
      : 'No CPU pinning (no `taskset`, one CPU, or FW_BENCH_NO_PIN set): rounds swing far more.'
  }
- Before timing, each server's answer to each scenario is checked (status 200, a JSON
  content-type, the exact body; for the param route also that a non-int id is a 404). A server
  that answers wrong is not timed on that scenario.
- Each scenario: a ${options.warmUpS} s untimed warm-up per server, then ${options.rounds} rounds;
  a round times every server once, round robin, the first server rotating each round, so
  noise spreads over all of them. Reported: the median over the rounds.
- **CPU µs per request**: the server process reports \`process.cpuUsage()\` (user + system, all
  its threads, GC included) over the timed window via IPC; divided by the 2xx responses
  autocannon counted. On a 2-core machine where server and load generator share the cores,
  requests/s mostly measures how the two share them; CPU per request is the steadier figure.
- Requests/s = 2xx responses ÷ autocannon's duration. Latency p50 / p99 from autocannon.
- Every request carries \`x-forwarded-proto: https\` (as behind a TLS-terminating proxy on
  loopback): in production fw's built-in HTTPS redirect would otherwise answer 301. The
  others ignore the header.`
}

function setupNotes() {
  return `- Handlers and semantics are the same everywhere: \`hello\` returns \`{"hello":"world"}\`;
  the param route returns \`{"id":42,"slug":"hello-world"}\` (id as a number, non-int ids 404)
  behind 3 route-level no-op middleware; \`echo\` parses the JSON body (${ECHO_BODY.length} bytes,
  \`content-type: application/json\`) and answers it re-serialized. No response schemas.
- \`routes\`: the app holds the GitHub, Parse.com and Google+ API lists of the Go routing
  benchmark (\`bench/routes/go-http-routing.mjs\`, ${FILLER_ROUTES.length} routes, each answering \`{}\`)
  and the scenario route, registered last (${FILLER_ROUTES.length + 1} routes). Express tries routes in
  registration order, so it pays for every route before it; tree and compiled routers do not.
- **node:http (bare)**: the ceiling. A hand-written URL split, \`JSON.parse\`/\`JSON.stringify\`,
  \`writeHead\` + \`end\`; the middleware are 3 nested awaited async calls. It has no router:
  in \`routes\` it only knows the scenario path.
- **fw**: \`Kernel.boot({ routeCache, register, log: silentLogger })\` on the route cache built
  by \`fw route:cache build\`, served by \`http.createServer(createListener(() => kernel))\`.
  Built-in middleware on, as a user gets it: in production the HTTPS redirect, client_ip,
  request_id (adds \`x-request-id\`) and trace. **fw (builtins off)**: \`builtins: false\`.
  Middleware: \`async (request, next) => await next(request)\`; handlers return \`json(...)\`.
- **Fastify**: \`logger: false\`; the middleware are 3 async \`preHandler\` hooks (Fastify's hooks
  run in sequence, they do not wrap the handler); the id is a \`:id(^\\d+$)\` regex param.
- **Hono**: \`new Hono()\` (SmartRouter) on \`createAdaptorServer\` of @hono/node-server;
  middleware \`async (c, next) => { await next() }\`; the id is \`:id{[0-9]+}\`.
- **Express**: defaults (ETag and X-Powered-By on); \`express.json()\` on \`/echo\` only. Express 5
  has no param regexes: a guard first in the route's chain sends non-int ids on with
  \`next('route')\` (404). Middleware call \`next()\` (Express does not await it).`
}

function machineSection(machine, versions, loadavg, dist) {
  const la = (v) => v.map((x) => x.toFixed(2)).join(' / ')
  return [
    ...machineLines(machine, 'Packages', versions),
    `- fw: git ${gitHead()}, ${distText(dist)}`,
    `- Load average (1 / 5 / 15 min) before the run: ${la(loadavg.before)}; after: ${la(loadavg.after)}`,
    '',
    `**Noise.** This machine is shared: ${machine.cores} cores for the server, the load generator and`,
    'whatever else runs on it (see the load average). Server and autocannon compete for the same',
    'cores, so requests/s in particular swings. The VM itself also runs faster or slower from one',
    'moment to the next (two unpinned runs of the same code on 2026-11-22 measured bare node:http at',
    '16.2 and 23.6 µs per hello request), which is why the rounds are many and short, every server',
    'is timed in each, and the servers share one pinned core: compare servers within one run, by',
    'CPU µs per request, and treat ratios that differ by under ~5% as noise.',
  ].join('\n')
}

export function httpMarkdown(result, { machine, quick }) {
  const { options, loadavg, elapsedS } = result
  const targets = evaluateHttpTargets(result)
  const problems = problemList(result)
  const scenarioList = options.scenarios.map((s) => `- \`${s.id}\`: ${s.title}`).join('\n')
  return [
    '# HTTP benchmark results',
    '',
    `Written by \`node bench/run.mjs --http\` (also part of \`npm run bench\`) in ${elapsedS.toFixed(0)} s${quick ? ' — QUICK smoke run, numbers are rough' : ''}.`,
    'Code: `bench/http/`. Re-run with `npm run build && node bench/run.mjs --http`.',
    '',
    machineSection(machine, httpVersions(), loadavg, result.dist),
    '',
    '## Scenarios',
    '',
    scenarioList,
    '',
    '## Targets',
    '',
    'fw here is the default kernel (built-in middleware on); fw (builtins off) is given alongside.',
    '',
    markdownTable(
      {
        header: ['target', 'result', 'status'],
        rows: targets.map((t) => [t.target, t.result, t.status]),
      },
      3,
    ),
    '',
    `## Server CPU µs per request (median of ${options.rounds} rounds; lower is better)`,
    '',
    markdownTable(cpuTable(result)),
    '',
    `## Requests per second (median of ${options.rounds} rounds; higher is better)`,
    '',
    markdownTable(rpsTable(result)),
    '',
    '## Latency p50 / p99 (ms, median over rounds)',
    '',
    markdownTable(latencyTable(result)),
    '',
    roundsSection(result),
    '',
    '## How it is measured',
    '',
    methodNotes(options, result.pinning),
    '',
    '## Setup',
    '',
    setupNotes(),
    '',
    '## Verification failures and errors',
    '',
    problems.length ? problems.map((p) => `- ${p}`).join('\n') : '- none',
  ].join('\n')
}
