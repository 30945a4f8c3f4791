// Profiles one server under load: starts it with `node --cpu-prof`, checks it, warms it up,
// loads it with autocannon (from this process) for a few seconds, lets it exit normally so V8
// writes the profile, then lists the functions with the most self time. Code in dist/ is
// mapped back to src/ through the source maps `npm run build` writes.
//
//   node bench/http/profile.mjs                       fw, the `routes` scenario, 5 s
//   node bench/http/profile.mjs --server fw-nobuiltins --scenario hello --duration 10 --top 40

import { readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { SourceMap } from 'node:module'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildFw, ROOT } from '../lib/fw.mjs'
import { ServerProcess } from './child.mjs'
import { load, verify } from './load.mjs'
import { SCENARIOS, SERVERS } from './scenarios.mjs'

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'fw' },
    scenario: { type: 'string', default: 'routes' },
    duration: { type: 'string', default: '5' },
    top: { type: 'string', default: '25' },
  },
})
const server = SERVERS.find((s) => s.id === values.server)
const scenario = SCENARIOS.find((s) => s.id === values.scenario)
if (!server || !scenario) throw new Error('unknown --server or --scenario')

const TMP = join(import.meta.dirname, '..', '.tmp')
const PROF_DIR = join(TMP, 'http-profile')

async function profile() {
  await rm(PROF_DIR, { recursive: true, force: true })
  await mkdir(PROF_DIR, { recursive: true })
  const options = {}
  if (server.module === 'fw.mjs') {
    const routes = join(import.meta.dirname, 'servers', `fw-routes-${scenario.app}.mjs`)
    const build = await buildFw(routes, join(TMP, `http-fw-${scenario.app}`))
    if (!build.ok) throw new Error(`fw build failed:\n${build.output}`)
    options.fwCache = join(build.routerFile, '..')
  }
  const execArgv = ['--cpu-prof', '--cpu-prof-dir', PROF_DIR]
  const proc = new ServerProcess(server, scenario.app, { options, execArgv })
  try {
    await proc.ready()
    const wrong = await verify(proc.port, scenario)
    if (wrong) throw new Error(`${server.label} answers ${scenario.id} wrong: ${wrong}`)
    const warm = await load(proc.port, scenario, 1)
    const result = await load(proc.port, scenario, Number(values.duration))
    console.log(
      `${server.label}, ${scenario.id}: ${Math.round(result.rps)} req/s under the profiler`,
    )
    requests = warm.ok2xx + result.ok2xx
  } finally {
    await proc.stop()
  }
  const file = readdirSync(PROF_DIR).find((f) => f.endsWith('.cpuprofile'))
  if (!file) throw new Error('no .cpuprofile written')
  return join(PROF_DIR, file)
}
let requests = 0

// dist/… positions → src/… positions, through dist's source maps (cached per file).
const maps = new Map()
function original(url, line, column) {
  if (!url.startsWith('file://')) return null
  const path = fileURLToPath(url)
  if (!path.startsWith(join(ROOT, 'dist'))) return null
  if (!maps.has(path)) {
    try {
      maps.set(path, new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))))
    } catch {
      maps.set(path, null)
    }
  }
  const entry = maps.get(path)?.findEntry(line, column)
  if (!entry?.originalSource) return null
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : join(path, '..', entry.originalSource)
  return `${relative(ROOT, source)}:${entry.originalLine + 1}`
}

function where({ url, lineNumber, columnNumber }) {
  if (!url) return ''
  const mapped = original(url, lineNumber, columnNumber)
  if (mapped) return mapped
  const path = url.startsWith('file://') ? relative(ROOT, fileURLToPath(url)) : url
  return `${path}:${lineNumber + 1}`
}

// Self time per function (ms), from the sample counts.
function selfTimes(profile) {
  const totalMs = (profile.endTime - profile.startTime) / 1000
  const totalHits = profile.nodes.reduce((sum, n) => sum + n.hitCount, 0)
  const byFunction = new Map()
  for (const node of profile.nodes) {
    if (node.hitCount === 0) continue
    const frame = node.callFrame
    const name = frame.functionName || '(anonymous)'
    const at = where(frame)
    const key = `${name} ${at}`
    const row = byFunction.get(key) ?? { name, at, hits: 0 }
    row.hits += node.hitCount
    byFunction.set(key, row)
  }
  const rows = [...byFunction.values()].map((r) => ({ ...r, ms: (r.hits / totalHits) * totalMs }))
  return { rows: rows.sort((a, b) => b.hits - a.hits), totalHits, totalMs }
}

function area(at) {
  if (at.startsWith('src/')) return at.split('/').slice(0, 2).join('/') + '/'
  if (at.startsWith('bench/.tmp/')) return 'generated router (bench/.tmp)'
  if (at.startsWith('node_modules/')) return at.split('/')[1]
  if (at.startsWith('node:')) return 'node internals'
  if (at === '') return '(V8: gc, program, idle)'
  return at.split(':')[0]
}

function print(title, rows, busyHits, top) {
  console.log(`\n${title}\n`)
  for (const r of rows.slice(0, top)) {
    const pct = ((r.hits / busyHits) * 100).toFixed(1).padStart(5)
    const perRequest = ((r.ms * 1000) / requests).toFixed(2).padStart(6)
    console.log(`  ${pct}%  ${perRequest} µs/req  ${r.name.padEnd(34)} ${r.at}`)
  }
}

const file = await profile()
const data = JSON.parse(readFileSync(file, 'utf8'))
const { rows, totalHits } = selfTimes(data)
const idle = rows.filter((r) => r.name === '(idle)').reduce((s, r) => s + r.hits, 0)
const busy = rows.filter((r) => r.name !== '(idle)')
const busyHits = totalHits - idle
const top = Number(values.top)
console.log(`profile: ${relative(ROOT, file)} (${statSync(file).size} bytes)`)
console.log(
  `${requests} requests answered; % of the non-idle samples, µs per answered request`,
  '(whole process life, boot and warm-up included)',
)
print('Top self time, all code', busy, busyHits, top)
print(
  'Top self time in src/runtime',
  busy.filter((r) => r.at.startsWith('src/runtime/')),
  busyHits,
  top,
)
const areas = new Map()
for (const r of busy) areas.set(area(r.at), (areas.get(area(r.at)) ?? 0) + r.hits)
console.log('\nSelf time by area\n')
for (const [name, hits] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  console.log(`  ${((hits / busyHits) * 100).toFixed(1).padStart(5)}%  ${name}`)
}
