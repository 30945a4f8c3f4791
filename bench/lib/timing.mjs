// The timed functions and the mitata call. Two string modes for the looked-up path:
//
// - 'reused': one constant (literal, hence internalized) string per case, passed every call,
//   as most published router benchmarks do. V8 caches work keyed on the string object: its
//   hash, and the internalized copy a property lookup makes, are computed once and reused.
// - 'fresh': every call passes a string object that did not exist before, like a req.url
//   coming from the HTTP parser. It is `base.slice(from)` where `base` is the path behind a
//   fixed prefix: V8 returns a new SlicedString (>= 13 chars) or a new flat copy (shorter)
//   each call, with no cached hash and not internalized. We use slice rather than
//   concatenating two halves because a concatenation yields a ConsString that the router
//   must flatten (allocate + copy) on its first charCodeAt/regex/key lookup, a cost real
//   request URLs never have and that would hit routers unevenly. The cost of the slice itself
//   is timed separately by the 'baseline' pseudo-router and is included in every number.

import { do_not_optimize, measure } from 'mitata'

const PAD = '/fresh-string-pad'

export function freshParts(path) {
  return { base: PAD + path, from: PAD.length }
}

export function makePath(path, mode) {
  if (mode === 'reused') return path
  const { base, from } = freshParts(path)
  return base.slice(from)
}

// One lookup of one case per call.
export function makeCaseFn(lookup, c, mode) {
  const method = c.method
  if (mode === 'reused') {
    const path = c.path
    return () => do_not_optimize(lookup(method, path))
  }
  const { base, from } = freshParts(c.path)
  return () => do_not_optimize(lookup(method, base.slice(from)))
}

// One lookup of every case per call (round robin); divide the time by cases.length.
export function makeMixedFn(lookup, cases, mode) {
  const n = cases.length
  const methods = cases.map((c) => c.method)
  if (mode === 'reused') {
    const paths = cases.map((c) => c.path)
    return () => {
      for (let i = 0; i < n; i++) do_not_optimize(lookup(methods[i], paths[i]))
    }
  }
  const bases = cases.map((c) => freshParts(c.path).base)
  const from = PAD.length
  return () => {
    for (let i = 0; i < n; i++) do_not_optimize(lookup(methods[i], bases[i].slice(from)))
  }
}

// Runs fn for about `ms` milliseconds so the JIT has seen every case before timing starts.
export function warmUp(fn, ms) {
  const end = performance.now() + ms
  while (performance.now() < end) for (let i = 0; i < 1000; i++) fn()
}

// Median (p50) ns per call of fn, from mitata's measure() (what bench() + run() call for
// each benchmark; used directly to set the sampling time: 300 ms, or 5 ms with --quick).
// Fast functions are sampled in batches of 4096 calls.
export async function medianNs(fn, { quick }) {
  const opts = quick ? { min_cpu_time: 5e6, min_samples: 8 } : { min_cpu_time: 300e6 }
  const stats = await measure(fn, opts)
  return stats.p50
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
