// The fw-only scale test: 10,000 generated routes (routes/scale-10k.mjs). Measures the
// `fw route:cache build` time, the cold start of a fresh process that imports the generated
// router and matches once, and the heap the router takes; checks every route's sample match.

import { execFileSync } from 'node:child_process'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { generateScaleRoutes } from '../routes/scale-10k.mjs'
import { buildFw, writeRoutesFile } from './fw.mjs'
import { median } from './timing.mjs'

const CHILD = join(import.meta.dirname, '..', 'scale-child.mjs')

// Total size and number of the files the build generated.
async function generatedSize(cacheDir) {
  const entries = await readdir(cacheDir, { recursive: true, withFileTypes: true })
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
  const sizes = await Promise.all(files.map(async (file) => (await stat(file)).size))
  return { files: files.length, bytes: sizes.reduce((a, b) => a + b, 0) }
}

function runChild(args, execArgv = []) {
  const out = execFileSync(process.execPath, [...execArgv, CHILD, ...args], { encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').at(-1))
}

async function buildTimes(routesFile, cacheDir, runs) {
  const builds = []
  for (let i = 0; i < runs; i++) {
    const build = await buildFw(routesFile, cacheDir)
    if (!build.ok) return { ok: false, output: build.output }
    builds.push(build)
  }
  const printed = builds.map((b) => b.printedMs).filter((ms) => ms !== null)
  return {
    ok: true,
    runs,
    wallMs: median(builds.map((b) => b.wallMs)),
    printedMs: printed.length ? median(printed) : null,
    output: builds.at(-1).output,
    routerFile: builds.at(-1).routerFile,
  }
}

function coldStarts(routerFile, probe, runs) {
  const cold = Array.from({ length: runs }, () => runChild(['cold', routerFile, ...probe]))
  const heap = Array.from({ length: runs }, () =>
    runChild(['heap', routerFile, ...probe], ['--expose-gc']),
  )
  const bare = Array.from({ length: runs }, () => runChild(['bare']))
  return {
    runs,
    bareNodeMs: median(bare.map((r) => r.sinceStartMs)),
    sinceStartMs: median(cold.map((r) => r.sinceStartMs)),
    importAndMatchMs: median(cold.map((r) => r.importAndMatchMs)),
    heapDeltaBytes: median(heap.map((r) => r.heapDeltaBytes)),
    firstMatch: cold[0].name,
  }
}

// Returns { routes, build, cold, verify } or { routes, error }.
export async function runScaleTest({ tmpDir, quick }) {
  const routes = generateScaleRoutes()
  const routesFile = join(tmpDir, 'fw-scale', 'routes.mjs')
  const cacheDir = join(tmpDir, 'fw-scale', 'cache')
  await writeRoutesFile(
    routesFile,
    routes,
    routes.map((r) => r.pattern),
  )
  const build = await buildTimes(routesFile, cacheDir, quick ? 1 : 3)
  if (!build.ok) return { routes: routes.length, error: build.output }
  // The probe is the last route: the match must not stop early in a table that size.
  const last = routes.at(-1)
  const cold = coldStarts(build.routerFile, [last.method, last.sample.path], quick ? 2 : 5)
  const verify = runChild(['verify', build.routerFile])
  const size = await generatedSize(cacheDir)
  const probe = `${last.method} ${last.sample.path}`
  return { routes: routes.length, build, cold, verify, size, probe }
}
