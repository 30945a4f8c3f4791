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
import { makeCaseFn, makeMixedFn, makePath, makeWarmUpFn, medianNs, warmUp } from './lib/timing.mjs'
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

// `mixed` is timed first, right after the warm-up, then each case on its own.
async function timeCases(adapter, cases, problems, { mode, quick, mixedOnly }) {
  const wrong = cases.filter((c) => problems[c.name]).map((c) => c.name)
  const results = { mixed: await timeMixed(adapter, cases, wrong, { mode, quick }) }
  if (mixedOnly) return results
  for (const c of cases) {
    results[c.name] = problems[c.name]
      ? { status: 'wrong', detail: problems[c.name] }
      : { status: 'ok', ns: await medianNs(makeCaseFn(adapter.lookup, c, mode), { quick }) }
  }
  return results
}

async function timeMixed(adapter, cases, wrong, { mode, quick }) {
  if (wrong.length > 0) {
    return { status: 'wrong', detail: `includes wrong case(s): ${wrong.join(', ')}` }
  }
  const ns = await medianNs(makeMixedFn(adapter.lookup, cases, mode), { quick })
  return { status: 'ok', ns: ns / cases.length }
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
