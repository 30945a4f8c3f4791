// Runs the benchmarks and writes bench/RESULTS.md.
//
// Routing: builds fw's compiled router for each route set, times every router in its own child
// process (bench/worker.mjs) on each route set in each string mode (fresh, parsed, reused), runs the fw 10,000-route
// scale test. HTTP (bench/http/): fw, node:http, Fastify, Hono and Express servers, each in its
// own process, loaded by autocannon from this process. Throttle (bench/throttle/): µs per
// throttle check of fw's memory / Redis stores and middleware, rate-limiter-flexible and
// express-rate-limit, each in its own process. The HTTP and throttle sections of RESULTS.md are
// kept between marker comments (lib/sections.mjs), so each benchmark can be re-run alone.
//
//   node bench/run.mjs              routing + HTTP + throttle (`npm run bench` builds fw first),
//                                   about 15 min (routing ~8, HTTP ~7, throttle ~0.5)
//   node bench/run.mjs --http       HTTP only (6 rounds of 2.5 s per server and scenario; 2 s with the routing)
//   node bench/run.mjs --throttle   throttle only (~30 s; Redis at REDIS_URL, else 127.0.0.1:6379)
//                                   (--http --throttle: both, no routing)
//   node bench/run.mjs --no-http    routing + throttle; --no-throttle: routing + HTTP
//   node bench/run.mjs --quick      smoke run: verifies everything, times briefly, writes
//                                   bench/.tmp/RESULTS-quick.md instead of bench/RESULTS.md
//   --routers fw,rou3 --sets a      restrict the routing run (for development)
//   --servers fw,fastify --scenarios hello,routes --duration 2.5 --rounds 6
//                                   restrict or tune the HTTP run
//   --limiters fw-store,rlf-memory  restrict the throttle run (ids in bench/throttle/limiters.mjs)

import { fork } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ROUTERS } from './lib/adapters.mjs'
import { buildFw, fwCliBuilt, writeRoutesFile } from './lib/fw.mjs'
import { describeMachine } from './lib/machine.mjs'
import {
  MODES,
  consoleTable,
  evaluateTargets,
  formatNs,
  problemList,
  resultTable,
} from './lib/report.mjs'
import { resultsMarkdown, routerVersions } from './lib/results-md.mjs'
import { loadRouteSet, toSyntax } from './lib/route-set.mjs'
import { runScaleTest } from './lib/scale.mjs'
import { median } from './lib/timing.mjs'
import { writeHttpResults, writeRouterResults, writeThrottleResults } from './lib/sections.mjs'
import { httpOptions, runHttpBench } from './http/run-http.mjs'
import { httpMarkdown, printHttpSummary } from './http/report.mjs'
import { runThrottleBench, throttleOptions } from './throttle/run-throttle.mjs'
import { printThrottleSummary, throttleMarkdown } from './throttle/report.mjs'

const BENCH_DIR = import.meta.dirname
const TMP_DIR = join(BENCH_DIR, '.tmp')
const WORKER = join(BENCH_DIR, 'worker.mjs')
const WORKER_TIMEOUT_MS = 120_000
const MIXED_REPEATS = 2

function parseCli() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      routers: { type: 'string' },
      sets: { type: 'string', default: 'a,b' },
      'no-scale': { type: 'boolean', default: false },
      http: { type: 'boolean', default: false },
      'no-http': { type: 'boolean', default: false },
      throttle: { type: 'boolean', default: false },
      'no-throttle': { type: 'boolean', default: false },
      limiters: { type: 'string' },
      servers: { type: 'string' },
      scenarios: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
    },
  })
  if (values.http && values['no-http']) throw new Error('--http and --no-http exclude each other')
  if (values.throttle && values['no-throttle'])
    throw new Error('--throttle and --no-throttle exclude each other')
  const ids = values.routers?.split(',')
  // --http / --throttle select only those benchmarks; without either, all run but the --no-* ones.
  const only = values.http || values.throttle
  const routing = !only
  const number = (v) => (v === undefined ? undefined : Number(v))
  return {
    routing,
    throttle:
      values['no-throttle'] || (only && !values.throttle)
        ? null
        : throttleOptions({ quick: values.quick, limiters: values.limiters }),
    http:
      values['no-http'] || (only && !values.http)
        ? null
        : httpOptions({
            quick: values.quick,
            // With the routing benchmark (~10 min), 2 s runs keep `npm run bench` near 15 min.
            durationS: number(values.duration) ?? (values.quick ? 1 : routing ? 2 : 2.5),
            rounds: number(values.rounds),
            servers: values.servers,
            scenarios: values.scenarios,
          }),
    quick: values.quick,
    routers: ids ? ROUTERS.filter((r) => ids.includes(r.id)) : ROUTERS,
    sets: values.sets.split(',').map(loadRouteSet),
    scale: !values['no-scale'],
  }
}

// Writes the set's fw routes file and builds it; { ok, wallMs, printedMs, output, dir }.
async function buildFwForSet(set) {
  if (!fwCliBuilt()) return { ok: false, output: 'dist/cli/index.js missing: run `npm run build`' }
  const dir = join(TMP_DIR, `fw-set-${set.id}`)
  const routesFile = join(dir, 'routes.mjs')
  const patterns = set.routes.map((r) => toSyntax(r, 'fw'))
  await writeRoutesFile(routesFile, set.routes, patterns)
  const build = await buildFw(routesFile, join(dir, 'cache'))
  return { ...build, dir: join(dir, 'cache') }
}

// Forks one worker and resolves with its message (or an { ok: false, error } of our own).
function runWorker(routerId, setId, mode, { quick, fwDir, mixedOnly = false }) {
  const flags = [
    ...(quick ? ['--quick'] : []),
    ...(mixedOnly ? ['--mixed-only'] : []),
    ...(fwDir ? ['--fw-dir', fwDir] : []),
  ]
  return new Promise((resolve) => {
    let message = null
    const child = fork(WORKER, [routerId, setId, mode, ...flags], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), WORKER_TIMEOUT_MS)
    child.on('message', (m) => (message = m))
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      const error = `worker exited (code ${code}, signal ${signal}) without a result`
      resolve(message ?? { ok: false, error })
    })
  })
}

function progressLine(set, mode, router, run) {
  const wrong = run.ok ? Object.values(run.results).filter((e) => e.status !== 'ok').length : 0
  const mixed =
    run.ok && run.results.mixed.status === 'ok' ? `mixed ${formatNs(run.results.mixed.ns)} ns` : ''
  const flag = !run.ok ? `error: ${run.error.split('\n')[0]}` : wrong ? `${wrong} wrong` : mixed
  return `  set ${set.id}  ${mode.padEnd(6)}  ${router.label.padEnd(28)} ${flag}`
}

// The mixed number swings between processes (JIT luck), so besides the full worker each
// router gets MIXED_REPEATS more processes that time `mixed` only; the median is reported.
async function repeatMixed(set, mode, byRouter, options, fwBuild) {
  for (const router of options.routers) {
    const run = byRouter[router.id]
    if (!run.ok || run.results.mixed.status !== 'ok') continue
    const fwDir = fwBuild.dir
    const repeat = await runWorker(router.id, set.id, mode, { ...options, fwDir, mixedOnly: true })
    if (repeat.ok) run.results.mixed.samples.push(repeat.results.mixed.ns)
  }
}

function settleMixed(byRouter) {
  for (const run of Object.values(byRouter)) {
    if (run.ok && run.results.mixed.status === 'ok') {
      run.results.mixed.ns = median(run.results.mixed.samples)
    }
  }
}

async function runSetMode(set, mode, options, fwBuild) {
  const byRouter = {}
  for (const router of options.routers) {
    const run =
      router.id === 'fw' && !fwBuild.ok
        ? { ok: false, error: `fw build failed: ${fwBuild.output}` }
        : await runWorker(router.id, set.id, mode, { quick: options.quick, fwDir: fwBuild.dir })
    if (run.ok && run.results.mixed.status === 'ok')
      run.results.mixed.samples = [run.results.mixed.ns]
    byRouter[router.id] = run
    console.log(progressLine(set, mode, router, run))
  }
  const repeats = options.quick ? 0 : MIXED_REPEATS
  for (let i = 0; i < repeats; i++) await repeatMixed(set, mode, byRouter, options, fwBuild)
  settleMixed(byRouter)
  return byRouter
}

async function runAll(options, fwBuilds) {
  const runs = {}
  for (const set of options.sets) {
    runs[set.id] = {}
    for (const mode of MODES) {
      runs[set.id][mode] = await runSetMode(set, mode, options, fwBuilds[set.id])
    }
  }
  return runs
}

function printSummary(options, runs, scale) {
  for (const set of options.sets) {
    for (const mode of MODES) {
      console.log(
        `\nSet (${set.id}) ${set.title} — ${mode} strings, ns per lookup (best of 5 rounds, each a median)\n`,
      )
      console.log(consoleTable(resultTable(set, runs[set.id][mode])))
    }
  }
  console.log('\nTargets')
  for (const t of evaluateTargets(options.sets, runs, scale)) {
    console.log(`  ${t.met.replaceAll('*', '').padEnd(12)} ${t.target}: ${t.result}`)
    for (const detail of t.details ?? []) console.log(`               - ${detail}`)
  }
  const problems = problemList(options.sets, runs)
  if (problems.length) console.log(`\nProblems\n${problems.map((p) => `  ${p}`).join('\n')}`)
}

async function runRouting(options, machine, file) {
  const started = performance.now()
  const fwBuilds = {}
  for (const set of options.sets) {
    fwBuilds[set.id] = await buildFwForSet(set)
    if (!fwBuilds[set.id].ok)
      console.log(`fw build for set ${set.id} failed:\n${fwBuilds[set.id].output}`)
  }
  const runs = await runAll(options, fwBuilds)
  let scale = null
  if (options.scale) {
    console.log('  fw scale test (10,000 routes)...')
    scale = fwCliBuilt()
      ? await runScaleTest({ tmpDir: TMP_DIR, quick: options.quick })
      : { error: 'dist/cli missing' }
  }
  printSummary(options, runs, scale)
  const elapsedS = (performance.now() - started) / 1000
  const markdown = resultsMarkdown({
    machine,
    versions: routerVersions(runs),
    sets: options.sets,
    runs,
    fwBuilds,
    scale,
    quick: options.quick,
    elapsedS,
  })
  await writeRouterResults(file, markdown)
  console.log(`\nWrote the routing results to ${file} (${elapsedS.toFixed(0)} s)`)
}

async function runHttp(options, machine, file) {
  const http = options.http
  console.log(
    `\nHTTP benchmark: ${http.servers.length} servers × ${http.scenarios.length} scenarios × ${http.rounds} rounds × ${http.durationS} s`,
  )
  const result = await runHttpBench(http, { tmpDir: TMP_DIR })
  printHttpSummary(result)
  await writeHttpResults(file, httpMarkdown(result, { machine, quick: options.quick }))
  console.log(`\nWrote the HTTP results to ${file} (${result.elapsedS.toFixed(0)} s)`)
}

async function runThrottle(options, machine, file) {
  const throttle = options.throttle
  console.log(`\nThrottle benchmark: ${throttle.limiters.length} limiters, each in its own process`)
  const result = await runThrottleBench(throttle)
  printThrottleSummary(result)
  await writeThrottleResults(file, throttleMarkdown(result, { machine, quick: options.quick }))
  console.log(`\nWrote the throttle results to ${file} (${result.elapsedS.toFixed(0)} s)`)
}

async function main() {
  const started = performance.now()
  const options = parseCli()
  const machine = describeMachine()
  console.log(
    `${machine.cpu}, ${machine.cores} cores, node ${machine.node}${options.quick ? ' (quick run)' : ''}`,
  )
  await mkdir(TMP_DIR, { recursive: true })
  const file = options.quick ? join(TMP_DIR, 'RESULTS-quick.md') : join(BENCH_DIR, 'RESULTS.md')
  if (options.routing) await runRouting(options, machine, file)
  if (options.http) await runHttp(options, machine, file)
  if (options.throttle) await runThrottle(options, machine, file)
  console.log(`\nDone in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

await main()
