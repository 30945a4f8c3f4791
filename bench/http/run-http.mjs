// Runs the HTTP benchmark: builds fw's route caches, starts every server of an app in its own
// process, checks each server's answer to each scenario, then times the scenarios: a warm-up,
// then `rounds` rounds, each round timing every server once (round robin, the starting server
// rotating per round), with autocannon in this (the parent) process. For each timed run the
// server reports its CPU time over the window; CPU per request = that ÷ the 2xx responses.

import { join } from 'node:path'
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildFw, fwCliBuilt } from '../lib/fw.mjs'
import { median } from '../lib/timing.mjs'
import { ServerProcess } from './child.mjs'
import { pinLoadGenerator, pinning } from './pin.mjs'
import { distBuilt } from './report.mjs'
import { load, verify } from './load.mjs'
import { APPS, SCENARIOS, SERVERS } from './scenarios.mjs'

const FW_ROUTES = {
  small: join(import.meta.dirname, 'servers', 'fw-routes-small.mjs'),
  large: join(import.meta.dirname, 'servers', 'fw-routes-large.mjs'),
}
const PAUSE_MS = 100

export function httpOptions({ quick, durationS, rounds, servers, scenarios }) {
  const serverIds = servers?.split(',')
  const scenarioIds = scenarios?.split(',')
  return {
    quick,
    durationS: durationS ?? (quick ? 1 : 2.5),
    warmUpS: quick ? 0.3 : 0.5,
    // Many short rounds rather than a few long ones: the median then stands on more samples of
    // this VM's changing speed, spread over every server, for the same total time.
    rounds: rounds ?? (quick ? 2 : 6),
    servers: serverIds ? SERVERS.filter((s) => serverIds.includes(s.id)) : SERVERS,
    scenarios: scenarioIds ? SCENARIOS.filter((s) => scenarioIds.includes(s.id)) : SCENARIOS,
  }
}

const isFw = (server) => server.module === 'fw.mjs'

// Builds the fw route cache of each app the chosen scenarios use: { app → buildFw() result }.
export async function buildFwCaches(options, tmpDir) {
  const builds = {}
  if (!options.servers.some(isFw)) return builds
  for (const app of APPS) {
    if (!options.scenarios.some((s) => s.app === app)) continue
    if (!fwCliBuilt()) {
      builds[app] = { ok: false, output: 'dist/cli/index.js missing: run `npm run build`' }
      continue
    }
    builds[app] = await buildFw(FW_ROUTES[app], join(tmpDir, `http-fw-${app}`))
    if (!builds[app].ok) console.log(`fw build of the ${app} app failed:\n${builds[app].output}`)
  }
  return builds
}

// Starts one process per server; { id → ServerProcess | { error } }.
async function startServers(options, app, fwBuilds) {
  const started = {}
  for (const server of options.servers) {
    if (isFw(server) && !fwBuilds[app]?.ok) {
      started[server.id] = { error: `fw build failed: ${fwBuilds[app]?.output.split('\n')[0]}` }
      continue
    }
    const fwCache = fwBuilds[app] ? join(fwBuilds[app].routerFile, '..') : undefined
    const proc = new ServerProcess(server, app, { options: isFw(server) ? { fwCache } : {} })
    try {
      await proc.ready()
      started[server.id] = proc
    } catch (error) {
      await proc.stop()
      started[server.id] = { error: `did not start: ${error.message}` }
    }
  }
  return started
}

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function progress(scenario, label, round, server) {
  const head = `  ${scenario.id.padEnd(7)} ${label.padEnd(6)} ${server.label.padEnd(26)}`
  if (!round) return head
  const { rps, cpuUs, p50, p99, non2xx, errors } = round
  const bad = non2xx || errors ? `  (${non2xx} non-2xx, ${errors} errors)` : ''
  return `${head}${fmt(rps).padStart(8)} req/s ${fmt(cpuUs, 1).padStart(7)} µs/req  p50 ${p50} ms  p99 ${p99} ms${bad}`
}

// One timed run: CPU window around one autocannon run.
async function timedRun(proc, scenario, durationS) {
  await proc.cpuStart()
  const result = await load(proc.port, scenario, durationS)
  const cpu = await proc.cpuStop()
  const cpuTotal = cpu.user + cpu.system
  return { ...result, cpuUs: result.ok2xx > 0 ? cpuTotal / result.ok2xx : NaN, cpu }
}

async function runScenario(scenario, options, procs) {
  const byServer = {}
  const live = []
  for (const server of options.servers) {
    const proc = procs[server.id]
    if (proc.error) {
      byServer[server.id] = { status: 'error', error: proc.error }
      continue
    }
    let wrong
    try {
      wrong = await verify(proc.port, scenario)
    } catch (error) {
      wrong = `request failed: ${error.message}`
    }
    byServer[server.id] = wrong ? { status: 'wrong', error: wrong } : { status: 'ok', rounds: [] }
    if (wrong) console.log(`${progress(scenario, 'check', null, server)} WRONG: ${wrong}`)
    else live.push(server)
  }
  for (const server of live) {
    await load(procs[server.id].port, scenario, options.warmUpS)
    await sleep(PAUSE_MS)
  }
  for (let r = 0; r < options.rounds; r++) {
    const order = live.map((_, i) => live[(i + r) % live.length])
    for (const server of order) {
      const entry = byServer[server.id]
      if (entry.status !== 'ok') continue
      try {
        const round = await timedRun(procs[server.id], scenario, options.durationS)
        entry.rounds.push(round)
        console.log(progress(scenario, `r${r + 1}`, round, server))
      } catch (error) {
        byServer[server.id] = { status: 'error', error: error.message }
        console.log(`${progress(scenario, `r${r + 1}`, null, server)} ERROR: ${error.message}`)
      }
      await sleep(PAUSE_MS)
    }
  }
  for (const entry of Object.values(byServer)) {
    if (entry.status !== 'ok') continue
    const pick = (key) => median(entry.rounds.map((round) => round[key]))
    entry.rps = pick('rps')
    entry.cpuUs = pick('cpuUs')
    entry.p50 = pick('p50')
    entry.p99 = pick('p99')
    entry.non2xx = entry.rounds.reduce((sum, round) => sum + round.non2xx + round.errors, 0)
  }
  return byServer
}

export async function runHttpBench(options, { tmpDir }) {
  const started = performance.now()
  const loadBefore = os.loadavg()
  const distBefore = distBuilt()
  const fwBuilds = await buildFwCaches(options, tmpDir)
  const runs = {}
  const unpin = pinLoadGenerator()
  try {
    await runApps(options, fwBuilds, runs)
  } finally {
    unpin()
  }
  const loadAfter = os.loadavg()
  return {
    options,
    runs,
    fwBuilds,
    pinning: pinning.enabled ? { server: pinning.serverCpu, load: pinning.loadCpus } : null,
    loadavg: { before: loadBefore, after: loadAfter },
    dist: { before: distBefore, after: distBuilt() },
    elapsedS: (performance.now() - started) / 1000,
  }
}

async function runApps(options, fwBuilds, runs) {
  for (const app of APPS) {
    const scenarios = options.scenarios.filter((s) => s.app === app)
    if (scenarios.length === 0) continue
    const procs = await startServers(options, app, fwBuilds)
    try {
      for (const scenario of scenarios)
        runs[scenario.id] = await runScenario(scenario, options, procs)
    } finally {
      await Promise.all(Object.values(procs).map((p) => (p.error ? null : p.stop())))
    }
  }
}
