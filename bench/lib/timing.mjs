// The timed functions and the mitata call. Three string modes for the looked-up path:
//
// - 'reused': one constant (literal, hence internalized) string per case, passed every call,
//   as most published router benchmarks do. V8 caches work keyed on the string object: its
//   hash, and the internalized copy a property lookup makes, are computed once and reused.
// - 'fresh': every call passes a string object that did not exist before. It is
//   `base.slice(from)` where `base` is the path behind a fixed prefix: V8 returns a new
//   SlicedString (>= 13 chars) or a new flat copy (shorter) each call, with no cached hash and
//   not internalized — what a router gets when the path is cut from a longer string (a URL with
//   a query string). We use slice rather than concatenating two halves because a concatenation
//   yields a ConsString that the router must flatten (allocate + copy) on its first
//   charCodeAt/regex/key lookup, a cost real request URLs never have and that would hit routers
//   unevenly. The cost of the slice itself is timed separately by the 'baseline' pseudo-router
//   and is included in every number.
// - 'parsed': every call passes a new flat (sequential) string made from bytes, as Node's HTTP
//   parser makes `req.url`: no cached hash, not internalized, and not a slice either. On a
//   SlicedString V8 runs `===` against another string in the runtime (~50 ns for 20 chars, ~5 ns
//   on a flat one) and reads each character through the slice, so the two fresh modes differ.
//   The strings are made by mitata before each batch of calls (its "computed parameters"), so
//   making them (a C++ call, ~60 ns) is not timed.

import { do_not_optimize, measure } from 'mitata'

const PAD = '/fresh-string-pad'

export function freshParts(path) {
  return { base: PAD + path, from: PAD.length }
}

// A new flat string with the characters of `bytes` (latin1: every path here is ASCII).
const parsed = (bytes) => bytes.latin1Slice(0, bytes.length)

export function makePath(path, mode) {
  if (mode === 'reused') return path
  if (mode === 'parsed') return parsed(Buffer.from(path, 'latin1'))
  const { base, from } = freshParts(path)
  return base.slice(from)
}

// One lookup of one case per call. In 'parsed' mode a generator, mitata's form for computed
// parameters: the path comes in as the argument, made outside the timed loop.
export function makeCaseFn(lookup, c, mode) {
  const method = c.method
  if (mode === 'reused') {
    const path = c.path
    return () => do_not_optimize(lookup(method, path))
  }
  if (mode === 'parsed') {
    const bytes = Buffer.from(c.path, 'latin1')
    return function* () {
      yield { [0]: () => parsed(bytes), bench: (path) => do_not_optimize(lookup(method, path)) }
    }
  }
  const { base, from } = freshParts(c.path)
  return () => do_not_optimize(lookup(method, base.slice(from)))
}

// One lookup of every case per call (round robin); divide the time by cases.length. In
// 'parsed' mode a generator like makeCaseFn's, whose argument is one new path per case.
export function makeMixedFn(lookup, cases, mode) {
  const n = cases.length
  const methods = cases.map((c) => c.method)
  if (mode === 'reused') {
    const paths = cases.map((c) => c.path)
    return () => {
      for (let i = 0; i < n; i++) do_not_optimize(lookup(methods[i], paths[i]))
    }
  }
  if (mode === 'parsed') {
    const bytes = cases.map((c) => Buffer.from(c.path, 'latin1'))
    const run = (paths) => {
      for (let i = 0; i < n; i++) do_not_optimize(lookup(methods[i], paths[i]))
    }
    return function* () {
      yield { [0]: () => bytes.map(parsed), bench: run }
    }
  }
  const bases = cases.map((c) => freshParts(c.path).base)
  const from = PAD.length
  return () => {
    for (let i = 0; i < n; i++) do_not_optimize(lookup(methods[i], bases[i].slice(from)))
  }
}

// The mixed lookups as a plain function, for warming up: in 'parsed' mode the generator's
// parameter maker and timed function, called together (warm-up is not timed).
export function makeWarmUpFn(lookup, cases, mode) {
  const fn = makeMixedFn(lookup, cases, mode)
  if (mode !== 'parsed') return fn
  const { [0]: paths, bench } = fn().next().value
  return () => bench(paths())
}

// Runs fn for about `ms` milliseconds so the JIT has seen every case before timing starts.
export function warmUp(fn, ms) {
  const end = performance.now() + ms
  while (performance.now() < end) for (let i = 0; i < 1000; i++) fn()
}

// How each number is taken: ROUNDS short rounds, interleaved (round 1 of every timed function,
// then round 2 of every one, ...), each the median (p50) ns per call of mitata's measure() over
// ROUND_MS of sampling (fast functions are sampled in batches of 4096 calls); the number kept is
// the lowest round. On this shared VM a process's speed flips between states within a second
// (fw's set (a) mixed: 68 and 134 ns in consecutive 150 ms rounds of one process), so a single
// long measurement reports whichever state it mostly ran in; the best of interleaved rounds
// compares every router and case in the machine's quiet state.
export const ROUNDS = 5
const ROUND_MS = 60

// One round: the median ns per call of fn (a function, or a generator as makeCaseFn makes).
export async function roundNs(fn, { quick }) {
  const opts = quick ? { min_cpu_time: 5e6, min_samples: 8 } : { min_cpu_time: ROUND_MS * 1e6 }
  const stats = await measure(fn, opts)
  return stats.p50
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
