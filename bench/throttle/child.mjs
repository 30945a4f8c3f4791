// One limiter of the throttle benchmark, in its own process (forked by run-throttle.mjs with
// --expose-gc). argv[2] is a JSON { id, quick, prefix, redisUrl, clients, max, windowMs }.
//
// 1. Verification: a fresh limiter of 5 per 60 s on one client must allow 5 checks and refuse
//    the 6th (the fw middleware: 5 responses with X-RateLimit-Remaining 4..0, then a 429).
// 2. Timing: a limiter of `max` per `windowMs` (nothing is refused; any refusal is an error),
//    keys round robin over `clients` addresses. Warm-up, then batches of n checks timed with
//    performance.now(); n is set so a batch takes about BATCH_MS. Reported: µs per check, median
//    over the batches (and p25 / p75). Redis limiters are also timed with IN_FLIGHT checks
//    outstanding at once (wall time ÷ checks).
// Sends { ok, id, verify, sequential, concurrent } (or { ok: false, error }) over IPC.

import { limiterById } from './limiters.mjs'

const config = JSON.parse(process.argv[2])
const limiter = limiterById(config.id)
const PLAN = config.quick
  ? { warmUpMs: 150, batchMs: 15, batches: 7, concurrentBatches: 5 }
  : { warmUpMs: 1000, batchMs: 60, batches: 31, concurrentBatches: 11 }
export const IN_FLIGHT = 64
const VERIFY_RULE = { max: 5, windowMs: 60_000 }

const quantile = (sorted, q) => {
  const at = (sorted.length - 1) * q
  const lo = Math.floor(at)
  return sorted[lo] + (sorted[Math.ceil(at)] - sorted[lo]) * (at - lo)
}

function summary(samples, checks, refused) {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    us: quantile(sorted, 0.5),
    p25: quantile(sorted, 0.25),
    p75: quantile(sorted, 0.75),
    batches: samples.length,
    checks,
    refused,
  }
}

async function verify() {
  if (!limiter.make || limiter.reference) return { skipped: true }
  const probe = await limiter.make(VERIFY_RULE, { ...config, clients: ['192.0.2.77'] })
  try {
    const allowed = []
    const remaining = []
    for (let i = 0; i < 6; i++) {
      allowed.push(await probe.check(0))
      if (probe.lastResponse && allowed[i]) {
        remaining.push(probe.lastResponse().header('x-ratelimit-remaining'))
      }
    }
    const pattern = allowed.map((a) => (a ? 'pass' : 'refused')).join(', ')
    const problems = []
    if (allowed.slice(0, 5).some((a) => !a) || allowed[5])
      problems.push(`5 per 60 s: expected 5 passes then a refusal, got ${pattern}`)
    if (probe.lastResponse && remaining.join(',') !== '4,3,2,1,0')
      problems.push(
        `X-RateLimit-Remaining over the 5 passes: ${remaining.join(',')} (expected 4,3,2,1,0)`,
      )
    return { ok: problems.length === 0, pattern, remaining, problems }
  } finally {
    await probe.close()
  }
}

// Runs `run(n)` (n checks) repeatedly; returns µs per check of each run.
async function timeBatches(run, n, batches) {
  const samples = []
  let refused = 0
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now()
    refused += await run(n)
    samples.push(((performance.now() - t0) * 1000) / n)
  }
  return { samples, refused }
}

// Warms `run` up for PLAN.warmUpMs and picks the batch size n (about PLAN.batchMs a batch).
async function warmUp(run) {
  let n = 64
  let spent = 0
  let perCheckMs = 1
  let refused = 0
  const end = performance.now() + PLAN.warmUpMs
  while (performance.now() < end) {
    const t0 = performance.now()
    refused += await run(n)
    const dt = performance.now() - t0
    spent += n
    perCheckMs = dt / n
    if (dt < 5) n *= 2
  }
  return { n: Math.max(16, Math.round(PLAN.batchMs / perCheckMs)), checks: spent, refused }
}

async function timed(run, batches) {
  const warm = await warmUp(run)
  globalThis.gc?.()
  const { samples, refused } = await timeBatches(run, warm.n, batches)
  return summary(samples, warm.n * batches, refused + warm.refused)
}

async function main() {
  const result = { ok: true, id: config.id, verify: await verify() }
  if (result.verify.ok === false) {
    process.send({ ...result, ok: false, error: result.verify.problems.join('; ') })
    return
  }
  const rule = { max: config.max, windowMs: config.windowMs }
  const clients = config.clients
  const subject = await limiter.make(rule, config)
  try {
    let start = 0
    const sequential = (n) => {
      const refused = subject.loop(n, start)
      start = (start + n) % clients.length
      return refused
    }
    result.sequential = await timed(sequential, PLAN.batches)
    if (limiter.backend === 'redis' && subject.check) {
      // IN_FLIGHT workers, each checking its share of the n clients in sequence.
      const concurrent = async (n) => {
        const share = Math.ceil(n / IN_FLIGHT)
        const counts = await Promise.all(
          Array.from({ length: IN_FLIGHT }, async (_, w) => {
            let refused = 0
            for (let k = w * share; k < Math.min(n, (w + 1) * share); k++) {
              if (!(await subject.check((start + k) % clients.length))) refused++
            }
            return refused
          }),
        )
        start = (start + n) % clients.length
        return counts.reduce((a, b) => a + b, 0)
      }
      result.concurrent = {
        inFlight: IN_FLIGHT,
        ...(await timed(concurrent, PLAN.concurrentBatches)),
      }
    }
    for (const run of [result.sequential, result.concurrent].filter(Boolean)) {
      if (run.refused > 0) {
        Object.assign(result, {
          ok: false,
          error: `${run.refused} checks refused under ${rule.max} per ${rule.windowMs / 1000} s`,
        })
      }
    }
    result.memoryMiB = process.memoryUsage().rss / 2 ** 20
  } finally {
    await subject.close()
  }
  process.send(result)
}

try {
  await main()
} catch (error) {
  process.send({ ok: false, id: config.id, error: error?.stack ?? String(error) })
}
process.disconnect()
