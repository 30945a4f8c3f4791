// Child process of the fw scale test (bench/lib/scale.mjs), one fresh node per measurement:
//
//   node bench/scale-child.mjs cold <router.mjs> <method> <path>
//     import the router and do the first match; prints the time from process start
//     (performance.now() counts from the process's time origin) and import+match alone.
//   node --expose-gc bench/scale-child.mjs heap <router.mjs> <method> <path>
//     prints process.memoryUsage().heapUsed after minus before the import (gc'd both times).
//   node bench/scale-child.mjs bare
//     prints performance.now() at once: what a node process costs before any import.
//   node bench/scale-child.mjs verify <router.mjs>
//     matches the sample request of every generated route; prints the mismatches.

import { pathToFileURL } from 'node:url'

const [command, routerFile, method, path] = process.argv.slice(2)
const routerUrl = routerFile && pathToFileURL(routerFile).href
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

async function cold() {
  const start = performance.now()
  const { match } = await import(routerUrl)
  const result = match(method, path)
  const end = performance.now()
  print({ sinceStartMs: end, importAndMatchMs: end - start, name: result.route?.name ?? null })
}

async function bare() {
  print({ sinceStartMs: performance.now() })
}

async function heap() {
  globalThis.gc()
  const before = process.memoryUsage().heapUsed
  const { match } = await import(routerUrl)
  const result = match(method, path)
  globalThis.gc()
  const after = process.memoryUsage().heapUsed
  print({ heapDeltaBytes: after - before, name: result.route?.name ?? null })
}

function sameParams(got, expected) {
  const keys = Object.keys(expected)
  if (Object.keys(got ?? {}).length !== keys.length) return false
  return keys.every((k) => got[k] !== undefined && String(got[k]) === expected[k])
}

async function verify() {
  const { generateScaleRoutes } = await import('./routes/scale-10k.mjs')
  const { match } = await import(routerUrl)
  const problems = []
  generateScaleRoutes().forEach((route, i) => {
    const result = match(route.method, route.sample.path)
    const ok = result.route?.name === `r${i}` && sameParams(result.params, route.sample.params)
    if (ok) return
    const got = { name: result.route?.name, params: result.params, status: result.status }
    problems.push({ route: `${route.method} ${route.pattern}`, path: route.sample.path, got })
  })
  print({
    checked: generateScaleRoutes().length,
    wrong: problems.length,
    examples: problems.slice(0, 5),
  })
}

const commands = { bare, cold, heap, verify }
await commands[command]()
