// Console summary and the markdown of the throttle benchmark's section of bench/RESULTS.md.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../lib/fw.mjs'
import { consoleTable, markdownTable } from '../lib/report.mjs'
import { distText, gitHead } from '../http/report.mjs'
import { machineLines } from '../lib/machine.mjs'
import { CLIENTS, RULE } from './run-throttle.mjs'

const pkgVersion = (name) =>
  JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version

function versions() {
  const fw = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
  const names = ['rate-limiter-flexible', 'express-rate-limit', 'ioredis']
  return { fw, ...Object.fromEntries(names.map((n) => [n, pkgVersion(n)])) }
}

const fixed = (n) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0))
const int = (n) => n.toLocaleString('en-US')
const byId = (result, id) => result.runs.find((r) => r.id === id && r.ok)

function verifyText(run) {
  if (run.limiter.reference) return '— (reference)'
  if (!run.verify) return 'not run'
  if (run.verify.ok) return '5 pass, 6th refused'
  return `**failed**: ${run.verify.problems.join('; ')}`
}

function rows(result, { markdown }) {
  return result.runs.map((run) => {
    const l = run.limiter
    const label = markdown && !l.reference ? `**${l.label}**` : l.label
    const store = l.backend === 'redis' ? 'Redis' : 'memory'
    if (!run.ok) {
      return [
        label,
        store,
        l.algorithm,
        'error',
        '—',
        '—',
        '—',
        '—',
        markdown ? verifyText(run) : '',
      ]
    }
    const s = run.sequential
    const c = run.concurrent
    return [
      label,
      store,
      l.algorithm,
      fixed(s.us),
      `${fixed(s.p25)} – ${fixed(s.p75)}`,
      c ? fixed(c.us) : '—',
      int(s.checks),
      run.memoryMiB ? run.memoryMiB.toFixed(0) : '—',
      ...(markdown ? [verifyText(run)] : []),
    ]
  })
}

const HEADER = [
  'limiter',
  'store',
  'algorithm',
  'µs per check',
  'p25 – p75',
  '64 in flight',
  'checks timed',
  'RSS MiB',
]

// Lines comparing the rows that answer the benchmark's questions.
function findings(result) {
  const lines = []
  const get = (id) => byId(result, id)?.sequential.us
  const [store, mw, base] = [get('fw-store'), get('fw-middleware'), get('baseline-next')]
  if (mw !== undefined && base !== undefined) {
    lines.push(
      `fw middleware overhead per request (middleware row − \`await next()\` row): **${fixed(mw - base)} µs**` +
        (store !== undefined ? `, of which the store check is ${fixed(store)} µs.` : '.'),
    )
  }
  const ratio = (a, b, text) => {
    const [x, y] = [get(a), get(b)]
    if (x !== undefined && y !== undefined) lines.push(`${text}: ${(x / y).toFixed(2)}`)
  }
  ratio(
    'fw-store',
    'rlf-memory',
    'fw MemoryStore ÷ RateLimiterMemory (per check; below 1 = fw faster)',
  )
  ratio('fw-store', 'erl-memory', 'fw MemoryStore ÷ express-rate-limit MemoryStore')
  ratio('fw-redis', 'rlf-redis', 'fw RedisStore ÷ RateLimiterRedis, one check in flight')
  const [fr, rr] = [byId(result, 'fw-redis')?.concurrent, byId(result, 'rlf-redis')?.concurrent]
  if (fr && rr)
    lines.push(
      `fw RedisStore ÷ RateLimiterRedis, ${fr.inFlight} in flight: ${(fr.us / rr.us).toFixed(2)}`,
    )
  return lines
}

function problems(result) {
  const list = result.runs
    .filter((r) => !r.ok)
    .map((r) => `${r.limiter.label}: ${String(r.error).split('\n')[0]}`)
  if (result.redis.error) list.push(`Redis (${result.redis.url}): ${result.redis.error}`)
  return list
}

export function printThrottleSummary(result) {
  console.log(
    `\nThrottle: µs per check (median of batches), ${int(RULE.max)} per ${RULE.windowMs / 1000} s, ${int(CLIENTS)} clients\n`,
  )
  console.log(consoleTable({ header: HEADER, rows: rows(result, { markdown: false }) }))
  console.log('')
  for (const line of findings(result))
    console.log(`  ${line.replaceAll('**', '').replaceAll('`', '')}`)
  const list = problems(result)
  if (list.length) console.log(`\nProblems\n${list.map((p) => `  ${p}`).join('\n')}`)
}

function machineSection(machine, result) {
  const la = (v) => v.map((x) => x.toFixed(2)).join(' / ')

  const redis = result.redis.version
    ? `Redis ${result.redis.version} at ${result.redis.url} (same machine, loopback)`
    : `Redis at ${result.redis.url}: not reached`
  return [
    ...machineLines(machine, 'Packages', versions()),
    `- ${redis}`,
    `- fw: git ${gitHead()}, ${distText(result.dist)}`,
    `- Load average (1 / 5 / 15 min) before the run: ${la(result.loadavg.before)}; after: ${la(result.loadavg.after)}`,
  ].join('\n')
}

function method(result) {
  const { quick } = result.options
  const plan = quick
    ? '0.15 s warm-up, then 7 batches of ~15 ms (Redis with 64 in flight: 5 batches)'
    : '1 s warm-up, then 31 batches of ~60 ms (Redis with 64 in flight: another 1 s warm-up and 11 batches)'
  return `- Every limiter runs in its own child process (\`bench/throttle/child.mjs\`, \`--expose-gc\`),
  importing fw from \`dist/\` (\`dist/throttle/index.js\`, \`dist/runtime/index.js\`).
- Same work for all: a limit of ${int(RULE.max)} per ${RULE.windowMs / 1000} s (so nothing is refused; a refusal during timing is
  reported as an error), keys round robin over ${int(CLIENTS)} client addresses (\`10.0.x.y\`). One check = count
  the request against its client's counter and decide allowed / refused, awaited when the API
  returns a promise. fw stores get the key its middleware would build
  (\`pre0|1000000,60|ip:<address>\`), the others the address.
- Timing: a plain \`performance.now()\` loop of n checks per batch (the loop is written per limiter,
  with only the limiter's call in it); ${plan}; n is set from the warm-up so a batch lasts that
  long. Reported: µs per check, the median over the batches, and the p25 – p75 spread.
- **64 in flight** (Redis only): 64 concurrent sequences of checks on the one connection
  (each check through the verification wrapper, one extra \`.then\`), wall time ÷ checks: the
  per-check cost a busy server sees, where round-trips overlap. The
  sequential number (one check outstanding) is the latency a request pays; it is mostly the
  loopback round-trip (see the PING row).
- Before timing, each limiter is verified on a fresh instance with 5 per 60 s on one client:
  5 checks must pass and the 6th be refused (the fw middleware: 5 responses carrying
  \`X-RateLimit-Remaining\` 4, 3, 2, 1, 0, then a 429 \`HttpError\`). A limiter failing that is not timed.
- RSS MiB: the child's resident memory after timing (Node baseline ~50 MiB).
- Redis keys are created under a random prefix (\`${result.redis.prefix}\`) and deleted after
  each limiter (${int(result.redis.keysDeleted)} keys deleted this run).`
}

const NOTES = `- **Not the same algorithm.** fw (memory and Redis) is a sliding window log: it keeps the time
  of every admitted request of the window, so "at most max in any window" is exact. rate-limiter-flexible
  (memory and Redis) and express-rate-limit are **fixed windows**: one counter per key that resets
  \`windowMs\` after the key's first hit, so up to 2 × max can pass around a window boundary. A
  counter costs the same at any limit; the log stores 8 bytes per admission, so at this limit
  (nothing expires within the run) fw's memory grows with the number of checks — see RSS.
- **express-rate-limit**: only its \`MemoryStore.increment(key)\` is timed (the store does the
  counting; its middleware then compares \`totalHits > limit\`, which is included). It is an
  \`async\` method, awaited per check like the others.
- **fw MemoryStore.hit()** is synchronous (no promise); rate-limiter-flexible and
  express-rate-limit return promises from their memory stores, so their numbers include a
  promise and an await per check.
- **fw throttle middleware** is the whole per-request path of one \`throttle:1000000,60\` layer
  with a MemoryStore: the factory from \`createThrottle()\` called with
  \`FwRequest.create({ uri: '/x', attributes: { client_ip, 'route.name': 'x' } })\` (1,000 prebuilt
  requests; no \`route.params\`, so it runs as a pre-global layer, scope \`pre0\`) and a \`next\`
  returning a prebuilt \`json({ ok: true })\` response. It includes building
  the key (scope, client IP bucket), the store check, the per-request chain attribute, the
  \`X-RateLimit-*\` and \`Server-Timing\` headers (\`withHeaders\`, a new response) and two promise
  hops. The \`await next() alone\` row is the same loop without the middleware.
- The peers are timed at their store / limiter API, not through their Express middleware; fw's
  store rows are the comparable ones.`

export function throttleMarkdown(result, { machine, quick }) {
  const list = problems(result)
  return [
    '# Throttle benchmark results',
    '',
    `Written by \`node bench/run.mjs --throttle\` (also part of \`npm run bench\`) in ${result.elapsedS.toFixed(0)} s${quick ? ' — QUICK smoke run, numbers are rough' : ''}.`,
    'Code: `bench/throttle/`. Re-run with `node bench/run.mjs --throttle` (fw from `dist/`: `npm run build` first after changing `src/`).',
    '',
    machineSection(machine, result),
    '',
    `**Noise.** This machine is shared: ${machine.cores} cores for the benchmark, the Redis server and whatever`,
    'else runs on it (see the load average). The Redis rows swing the most between runs (±30% is',
    'common); memory rows by ±10–15%.',
    '',
    `## Time per throttle check (µs, median over batches; lower is better)`,
    '',
    `${int(RULE.max)} requests per ${RULE.windowMs / 1000} s, ${int(CLIENTS)} clients round robin. "64 in flight": Redis only, see below.`,
    '',
    markdownTable(
      { header: [...HEADER, 'verified (5 per 60 s)'], rows: rows(result, { markdown: true }) },
      3,
    ),
    '',
    ...findings(result).map((line) => `- ${line}`),
    '',
    '## How it is measured',
    '',
    method(result),
    '',
    '## What differs between the limiters',
    '',
    NOTES,
    '',
    '## Verification failures and errors',
    '',
    list.length ? list.map((p) => `- ${p}`).join('\n') : '- none',
  ].join('\n')
}
