// Instructions per request, counted by valgrind (callgrind) instead of timed: the HTTP
// benchmark's servers and scenarios, each server under `valgrind --tool=callgrind`, answering
// one keep-alive connection that this process drives request by request. After a warm-up (the
// JIT settles: no compilation or deoptimization is left in the counted window), the counters are
// zeroed, N requests are counted, and the main thread's total divided by N is the figure.
// Counts are steadier than CPU time (±5% at best here), but not exact: work Node does per unit
// of time (timers, the cached Date header) is spread over fewer requests when valgrind runs
// slower. On a quiet VM repeat runs agree within ~1%; a run beside another callgrind run counted
// up to ~3,500 more instructions per hello request (fw and Fastify alike), and on 2026-11-25,
// with the VM ~1.7x slower than usual, runs of one build of fw without builtins counted 59.5k to
// 63.1k on hello. Run it on an otherwise idle machine, and compare two builds by alternating
// runs of each (several), not by one run each.
//
//   node bench/http/instructions.mjs [--servers node,fastify,fw,fw-nobuiltins]
//                                    [--scenarios hello,params,routes,echo] [--warm 20000]
//                                    [--count 5000] [--quick] [--profile]
//
// Needs valgrind (callgrind_control included). Writes its section of bench/RESULTS.md
// (--quick: of bench/.tmp/RESULTS-quick.md).
// --profile: node runs with --perf-basic-prof and, instead of the section, each run's functions
// with the most instructions (self) are printed, JIT code named from V8's perf map.

import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeSection } from '../lib/sections.mjs'
import { PRODUCTION_ENV } from './child.mjs'
import { buildFwCaches } from './run-http.mjs'
import { SCENARIOS, SERVERS } from './scenarios.mjs'

const HERE = import.meta.dirname
// A profile run works in a folder of its own: it can run beside a measuring run.
const TMP = join(
  HERE,
  '..',
  '.tmp',
  process.argv.includes('--profile') ? 'instructions-profile' : 'instructions',
)
const RESULTS = join(HERE, '..', 'RESULTS.md')
const QUICK_RESULTS = join(HERE, '..', '.tmp', 'RESULTS-quick.md')
const SERVER = join(HERE, 'instructions-server.mjs')

function options() {
  const { values } = parseArgs({
    options: {
      servers: { type: 'string', default: 'node,fastify,fw,fw-nobuiltins' },
      scenarios: { type: 'string', default: 'hello,params,routes,echo' },
      warm: { type: 'string' },
      count: { type: 'string' },
      quick: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      top: { type: 'string', default: '30' },
    },
  })
  const pick = (list, ids) =>
    ids.split(',').map((id) => list.find((x) => x.id === id) ?? fail(`unknown: ${id}`))
  return {
    servers: pick(SERVERS, values.servers),
    scenarios: pick(SCENARIOS, values.scenarios),
    warm: Number(values.warm ?? (values.quick ? 3000 : 20000)),
    count: Number(values.count ?? (values.quick ? 1000 : 5000)),
    quick: values.quick,
    profile: values.profile,
    top: Number(values.top),
  }
}

function fail(message) {
  throw new Error(message)
}

// One request on the shared keep-alive agent; resolves with the status.
function send(agent, port, scenario) {
  const headers = { ...scenario.headers }
  if (scenario.body) headers['content-length'] = Buffer.byteLength(scenario.body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: scenario.path, method: scenario.method, headers, agent },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode))
      },
    )
    req.on('error', reject)
    req.end(scenario.body)
  })
}

// Every server's young generation is pinned at V8's default maximum (16 MiB on 64-bit). Left to
// V8, it is grown from 1 MiB by a heuristic, and how far it got during the warm-up decided how
// many scavenges (each a fixed ~0.3M instructions of root visiting) the counted requests shared:
// that was the bimodal spread of earlier runs (fw without builtins: 60.0k in one run, 63.5k in
// the next, on the same build). Pinned, repeat runs agree; pinned at 1 MiB instead, every server
// counts ~4k more and the ratios between them stay within 1%.
const SEMI_SPACE = ['--min-semi-space-size=16', '--max-semi-space-size=16']

// Starts `server` under callgrind; resolves { pid, port, outFile, stop }.
function startUnderCallgrind(server, app, fwCache, name, profile) {
  const outFile = join(TMP, `callgrind.${name}`)
  const node = [process.execPath, ...SEMI_SPACE, ...(profile ? ['--perf-basic-prof'] : [])]
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${outFile}`,
    ...node,
    SERVER,
    server.id,
    app,
    fwCache ?? '',
  ]
  const child = spawn('valgrind', args, {
    env: { ...process.env, ...PRODUCTION_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 180_000)
    const onData = (chunk) => {
      output += chunk
      const ready = /^ready (\d+)$/m.exec(output)
      if (!ready) return
      clearTimeout(timer)
      child.stdout.off('data', onData)
      const stop = () =>
        new Promise((done) => {
          child.once('exit', done)
          child.kill('SIGTERM')
        })
      resolve({ pid: child.pid, port: Number(ready[1]), outFile, stop })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk) => (output += chunk))
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}):\n${output}`)))
  })
}

// The main thread's instruction total in the dump callgrind wrote after `-d`.
function mainThreadTotal(dump) {
  const summary = /^summary: (\d+)$/m.exec(readFileSync(dump, 'utf8'))
  if (!summary) throw new Error(`no summary in ${dump}`)
  return Number(summary[1])
}

async function measure(server, scenario, fwCache, { warm, count, profile, top }) {
  const name = `${server.id}-${scenario.id}`
  const running = await startUnderCallgrind(server, scenario.app, fwCache, name, profile)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  let wrong = 0
  try {
    for (let i = 0; i < warm; i++) if ((await send(agent, running.port, scenario)) !== 200) wrong++
    execFileSync('callgrind_control', ['-z', String(running.pid)], { stdio: 'ignore' })
    for (let i = 0; i < count; i++) if ((await send(agent, running.port, scenario)) !== 200) wrong++
    execFileSync('callgrind_control', ['-d', String(running.pid)], { stdio: 'ignore' })
  } finally {
    agent.destroy()
    await running.stop()
  }
  if (wrong > 0)
    return { server: server.id, scenario: scenario.id, error: `${wrong} answers were not 200` }
  // The main thread's dump (callgrind numbers threads from 1).
  const dump = `${running.outFile}.1-01`
  if (profile) console.log(`\n${name}:\n${topFunctions(dump, running.pid, count, top)}`)
  return {
    server: server.id,
    scenario: scenario.id,
    perRequest: Math.round(mainThreadTotal(dump) / count),
  }
}

// The functions with the most instructions of their own in a callgrind dump, per request. Code
// callgrind has no symbol for (V8's JIT code) is named from the perf map V8 wrote for `pid`
// (which is removed once read: one per profiled server, a few hundred KB each).
function topFunctions(dump, pid, count, top) {
  const perfMap = `/tmp/perf-${pid}.map`
  const map = existsSync(perfMap)
    ? readFileSync(perfMap, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [start, size, ...name] = line.split(' ')
          return {
            start: parseInt(start, 16),
            end: parseInt(start, 16) + parseInt(size, 16),
            name: name.join(' '),
          }
        })
        .sort((a, b) => a.start - b.start)
    : []
  rmSync(perfMap, { force: true })
  const nameOf = (address) => {
    let lo = 0
    let hi = map.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (map[mid].start > address) hi = mid - 1
      else if (map[mid].end <= address) lo = mid + 1
      else return map[mid].name
    }
    return `0x${address.toString(16)}`
  }
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', `--threshold=100`, dump], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  })
  const totals = new Map()
  for (const line of text.split('\n')) {
    const row = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line)
    if (!row) continue
    const address = /0x([0-9a-f]+)/.exec(row[2])
    const name =
      address && row[2].startsWith('???')
        ? nameOf(parseInt(address[1], 16))
        : row[2].replace(/ \[.*\]$/, '')
    totals.set(name, (totals.get(name) ?? 0) + Number(row[1].replaceAll(',', '')))
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${String(Math.round(n / count)).padStart(8)}  ${name.slice(0, 150)}`)
    .join('\n')
}

// { app → cache dir } for the apps the chosen scenarios use.
async function fwCaches(opts) {
  const caches = {}
  for (const [app, build] of Object.entries(await buildFwCaches(opts, TMP))) {
    if (!build.ok) fail(`fw build of the ${app} app failed:\n${build.output}`)
    caches[app] = join(build.routerFile, '..')
  }
  return caches
}

function markdown(results, opts) {
  const servers = opts.servers
  const cell = (server, scenario) => {
    const r = results.find((x) => x.server === server.id && x.scenario === scenario.id)
    if (!r) return '–'
    return r.error ? `error: ${r.error}` : `${(r.perRequest / 1000).toFixed(1)}k`
  }
  const ratio = (a, b, scenario) => {
    const x = results.find((r) => r.server === a && r.scenario === scenario.id)?.perRequest
    const y = results.find((r) => r.server === b && r.scenario === scenario.id)?.perRequest
    return x && y ? (x / y).toFixed(3) : '–'
  }
  const lines = [
    '# Instructions per request (callgrind)',
    '',
    `Written by \`node bench/http/instructions.mjs\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC,`,
    `${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}${opts.quick ? ' (--quick)' : ''}.`,
    'Each server runs under `valgrind --tool=callgrind` and answers one keep-alive connection, one',
    `request at a time: ${opts.warm} requests to warm up (the JIT settles), then the counters are zeroed and`,
    `${opts.count} requests counted. The figure is the main thread's instructions divided by the count: Node's`,
    'own HTTP work and garbage collection included (young generation pinned at 16 MiB for every server, so',
    'the number of scavenges a run shares out does not depend on how far V8 grew it), no timing noise',
    '(repeat runs agree within ~1% on a quiet VM, a few % on a slow or busy one). Instructions are not time (cache',
    'misses and branch mispredictions are not in them): it complements the CPU time per request of the HTTP section.',
    '',
    `| server | ${opts.scenarios.map((s) => s.id).join(' | ')} |`,
    `| :--- | ${opts.scenarios.map(() => '---:').join(' | ')} |`,
    ...servers.map(
      (server) => `| ${server.label} | ${opts.scenarios.map((s) => cell(server, s)).join(' | ')} |`,
    ),
  ]
  const has = (id) => servers.some((s) => s.id === id)
  const rows = [
    ['fw', 'fastify'],
    ['fw-nobuiltins', 'fastify'],
    ['fw', 'node'],
    ['fw-nobuiltins', 'node'],
  ].filter(([a, b]) => has(a) && has(b))
  if (rows.length > 0) {
    lines.push(
      '',
      `| ratio | ${opts.scenarios.map((s) => s.id).join(' | ')} |`,
      `| :--- | ${opts.scenarios.map(() => '---:').join(' | ')} |`,
    )
    for (const [a, b] of rows)
      lines.push(`| ${a} ÷ ${b} | ${opts.scenarios.map((s) => ratio(a, b, s)).join(' | ')} |`)
  }
  lines.push('', ...NODE_20_NOTE)
  return lines.join('\n')
}

// Found with --profile and V8's IC log (--log-ic) on 2026-11-27, Node 20.20.
const NODE_20_NOTE = [
  "About 1.1k of fw's count over bare node:http on Node 20 is not fw's code: Node 20's ES module",
  'loader reads each file with `fs/promises.readFile`, whose `FileHandle` is an event emitter. After the',
  "~80 modules of fw's runtime, the property accesses in `EventEmitter.init`, which every IncomingMessage",
  "and ServerResponse runs, have seen too many object shapes and take V8's generic (megamorphic) path:",
  "the ServerResponse constructor counted 950 instructions in fw's process, 448 in the bare one. A bare",
  'server that awaits 80 `readFile`s at start counts +1.1-1.4k; with 80 `readFileSync`s, nothing. Loading',
  "fw's runtime, the bench app and the route cache through `require()` (synchronous reads) counted",
  "-0.8 to -1.6k on hello. Not done: an app's own ES modules bring it back, so only a benchmark would gain.",
]

async function main() {
  const opts = options()
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
  } catch {
    fail('valgrind is not installed')
  }
  rmSync(TMP, { recursive: true, force: true })
  mkdirSync(TMP, { recursive: true })
  const caches = await fwCaches(opts)
  const jobs = opts.scenarios.flatMap((scenario) =>
    opts.servers.map((server) => ({ server, scenario })),
  )
  const results = []
  // Two at a time (this machine has two cores): counts do not depend on what runs beside them.
  for (let i = 0; i < jobs.length; i += 2) {
    const batch = jobs.slice(i, i + 2).map(({ server, scenario }) =>
      measure(server, scenario, caches[scenario.app], opts).catch((error) => ({
        server: server.id,
        scenario: scenario.id,
        error: error.message.split('\n')[0],
      })),
    )
    for (const r of await Promise.all(batch)) {
      results.push(r)
      console.log(
        `  ${r.server.padEnd(14)} ${r.scenario.padEnd(8)} ${r.error ?? `${r.perRequest} instructions/request`}`,
      )
    }
  }
  if (opts.profile) return
  // A --quick smoke run does not replace the measured numbers (as `bench/run.mjs --quick`).
  const file = opts.quick ? QUICK_RESULTS : RESULTS
  mkdirSync(dirname(file), { recursive: true })
  await writeSection(file, 'instructions', markdown(results, opts))
  console.log(`Wrote the instruction counts to ${file}`)
  if (existsSync(TMP)) rmSync(TMP, { recursive: true, force: true })
}

await main()
