// Child process: builds ONE router for ONE route set, verifies every case in both string
// modes, warms up on all cases, then times `mixed` and each case in the requested string mode
// with mitata and sends the medians back to the parent (bench/run.mjs) as one IPC message.
//
//   node --expose-gc bench/worker.mjs <router> <set> <fresh|parsed|reused>
//     [--quick] [--mixed-only] [--fw-dir DIR]

import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { routerById } from './lib/adapters.mjs'
import { loadRouteSet } from './lib/route-set.mjs'
import {
  makeCaseFn,
  makeMixedFn,
  makePath,
  makeWarmUpFn,
  roundNs,
  ROUNDS,
  warmUp,
} from './lib/timing.mjs'
import { MODES } from './lib/report.mjs'
import { checkAnswer } from './lib/verify.mjs'

const TMP_DIR = join(import.meta.dirname, '.tmp')

function parseCli() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      'mixed-only': { type: 'boolean', default: false },
      'fw-dir': { type: 'string' },
    },
  })
  const [routerId, setId, mode] = positionals
  const { quick, 'mixed-only': mixedOnly, 'fw-dir': fwDir } = values
  return { routerId, setId, mode, quick, mixedOnly, fwDir }
}

// Verification uses every string mode whatever mode is timed: a router must be right on all.
function verifyCase(adapter, c) {
  if (adapter.baseline) return null
  for (const mode of MODES) {
    try {
      const raw = adapter.lookup(c.method, makePath(c.path, mode))
      const problem = checkAnswer(adapter.normalize(raw, c.method) ?? null, c)
      if (problem) return `${mode} string: ${problem}`
    } catch (error) {
      return `${mode} string: threw ${error.message}`
    }
  }
  return null
}

// Every timed function (`mixed` first, then each case) gets ROUNDS interleaved rounds; the
// lowest round is kept (see lib/timing.mjs). `mixed` is one pass over all cases per call.
async function timeCases(adapter, cases, problems, { mode, quick, mixedOnly }) {
  const wrong = cases.filter((c) => problems[c.name]).map((c) => c.name)
  const timed = []
  const results = {}
  if (wrong.length > 0) {
    results.mixed = { status: 'wrong', detail: `includes wrong case(s): ${wrong.join(', ')}` }
  } else {
    timed.push({ name: 'mixed', fn: makeMixedFn(adapter.lookup, cases, mode), per: cases.length })
  }
  for (const c of mixedOnly ? [] : cases) {
    if (problems[c.name]) results[c.name] = { status: 'wrong', detail: problems[c.name] }
    else timed.push({ name: c.name, fn: makeCaseFn(adapter.lookup, c, mode), per: 1 })
  }
  const best = new Map()
  for (let round = 0; round < (quick ? 1 : ROUNDS); round++) {
    for (const { name, fn, per } of timed) {
      const ns = (await roundNs(fn, { quick })) / per
      best.set(name, Math.min(best.get(name) ?? Infinity, ns))
    }
  }
  for (const [name, ns] of best) results[name] = { status: 'ok', ns }
  return results
}

async function main() {
  const args = parseCli()
  const set = loadRouteSet(args.setId)
  const router = routerById(args.routerId)
  const adapter = await router.create(set, { fwDir: args.fwDir, tmpDir: TMP_DIR })
  const problems = {}
  for (const c of set.cases) {
    const problem = verifyCase(adapter, c)
    if (problem) problems[c.name] = problem
  }
  const okCases = set.cases.filter((c) => !problems[c.name])
  if (okCases.length > 0) {
    warmUp(makeWarmUpFn(adapter.lookup, okCases, args.mode), args.quick ? 20 : 300)
  }
  const results = await timeCases(adapter, set.cases, problems, args)
  return { version: adapter.version, results }
}

// Without an IPC channel (run by hand) the message is printed instead.
const send = process.send ? (m) => process.send(m) : (m) => console.log(JSON.stringify(m, null, 2))

main().then(
  (message) => send({ ok: true, ...message }),
  (error) => send({ ok: false, error: error.stack ?? String(error) }),
)
