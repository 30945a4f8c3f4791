// One adapter per router. `create(set, opts)` registers the set's routes (route data = the
// route's index) and returns { version, lookup(method, path), normalize(raw, method) }.
// lookup() is what gets timed: the router's own match call, nothing more. normalize() runs
// only during verification and turns the raw result into { index, params } or null (miss).

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { catchAllName, toSyntax } from './route-set.mjs'

const require = createRequire(import.meta.url)
const ROOT = join(import.meta.dirname, '..', '..')
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))
const version = (pkg) => readJson(join(ROOT, 'node_modules', pkg, 'package.json')).version
const noop = () => {}

// Routers that report a catch-all under '*' get it renamed to the route's param name.
function renameStar(params, route) {
  if (!params || !('*' in params)) return { ...params }
  const { '*': rest, ...others } = params
  return { ...others, [catchAllName(route)]: rest }
}

async function findMyWay(set, { compile = false } = {}) {
  const FindMyWay = require('find-my-way')
  const router = FindMyWay()
  // The store is an object: find-my-way turns a falsy store (route index 0) into null.
  set.routes.forEach((r, i) => router.on(r.method, toSyntax(r, 'findMyWay'), noop, { index: i }))
  if (compile) router.compile()
  return {
    version: version('find-my-way'),
    lookup: (method, path) => router.find(method, path),
    normalize: (raw) => {
      if (!raw) return null
      const index = raw.store.index
      return { index, params: renameStar(raw.params, set.routes[index]) }
    },
  }
}

async function medley(set) {
  const Router = require('@medley/router')
  const router = new Router()
  set.routes.forEach((r, i) => (router.register(toSyntax(r, 'plain'))[r.method] = i))
  return {
    version: version('@medley/router'),
    // @medley/router matches paths only; the method check on the store is part of a lookup.
    lookup: (method, path) => {
      const found = router.find(path)
      return found !== null && found.store[method] !== undefined ? found : null
    },
    normalize: (raw, method) => {
      if (!raw) return null
      const index = raw.store[method]
      return { index, params: renameStar(raw.params, set.routes[index]) }
    },
  }
}

async function memoirist(set) {
  const { Memoirist } = await import('memoirist')
  const router = new Memoirist()
  set.routes.forEach((r, i) => router.add(r.method, toSyntax(r, 'plain'), i))
  return {
    version: version('memoirist'),
    lookup: (method, path) => router.find(method, path),
    normalize: (raw) =>
      raw && { index: raw.store, params: renameStar(raw.params, set.routes[raw.store]) },
  }
}

async function rou3Router(set) {
  const rou3 = await import('rou3')
  const router = rou3.createRouter()
  set.routes.forEach((r, i) => rou3.addRoute(router, r.method, toSyntax(r, 'rou3'), i))
  return { rou3, router }
}

const rou3Normalize = (raw) => raw && { index: raw.data, params: { ...raw.params } }

async function rou3Find(set) {
  const { rou3, router } = await rou3Router(set)
  const { findRoute } = rou3
  return {
    version: version('rou3'),
    lookup: (method, path) => findRoute(router, method, path),
    normalize: rou3Normalize,
  }
}

async function rou3Compiled(set) {
  const { router } = await rou3Router(set)
  const { compileRouter } = await import('rou3/compiler')
  const match = compileRouter(router)
  return { version: version('rou3'), lookup: match, normalize: rou3Normalize }
}

// compileRouterToString output written to a module under bench/.tmp/ and imported, as an
// ahead-of-time build would do.
async function rou3String(set, { tmpDir }) {
  const { router } = await rou3Router(set)
  const { compileRouterToString } = await import('rou3/compiler')
  const code = compileRouterToString(router, { functionName: 'findRoute' })
  await mkdir(tmpDir, { recursive: true })
  const file = join(tmpDir, `rou3-string-${set.id}.mjs`)
  await writeFile(file, `${code}\nexport default findRoute\n`)
  const { default: match } = await import(pathToFileURL(file).href)
  return { version: version('rou3'), lookup: match, normalize: rou3Normalize }
}

// Hono routers return [[[handler, paramIndexMap | params], ...], paramStash?]. RegExpRouter
// leaves params as indexes into the stash (Hono's Context resolves them lazily).
function honoNormalize(raw) {
  const first = raw[0][0]
  if (!first) return null
  const [index, map] = first
  const stash = raw[1]
  if (!stash) return { index, params: { ...map } }
  const params = {}
  for (const key in map) params[key] = stash[map[key]]
  return { index, params }
}

async function hono(set, RouterClass) {
  const router = new RouterClass()
  set.routes.forEach((r, i) => router.add(r.method, toSyntax(r, 'hono'), i))
  return {
    version: version('hono'),
    lookup: (method, path) => router.match(method, path),
    normalize: honoNormalize,
  }
}

async function honoRegExp(set) {
  const { RegExpRouter } = await import('hono/router/reg-exp-router')
  return hono(set, RegExpRouter)
}

async function honoTrie(set) {
  const { TrieRouter } = await import('hono/router/trie-router')
  return hono(set, TrieRouter)
}

// fw: the router module generated by `fw route:cache build` (see lib/fw.mjs).
async function fw(set, { fwDir }) {
  if (!fwDir) throw new Error('fw router was not built')
  const { match } = await import(pathToFileURL(join(fwDir, 'router.mjs')).href)
  return {
    version: readJson(join(ROOT, 'package.json')).version,
    lookup: match,
    normalize: (raw) =>
      raw && raw.route ? { index: Number(raw.route.name.slice(1)), params: raw.params } : null,
  }
}

// Not a router: returns the path string. Times the string handling and call overhead alone.
async function baseline() {
  return { version: '-', lookup: (method, path) => path, normalize: () => null, baseline: true }
}

export const ROUTERS = [
  { id: 'fw', label: 'fw (compiled)', pkg: 'fw', create: fw },
  { id: 'fmw', label: 'find-my-way', pkg: 'find-my-way', create: (set) => findMyWay(set) },
  {
    id: 'fmw-compiled',
    label: 'find-my-way compile()',
    pkg: 'find-my-way',
    create: (set) => findMyWay(set, { compile: true }),
  },
  { id: 'medley', label: '@medley/router', pkg: '@medley/router', create: medley },
  { id: 'memoirist', label: 'memoirist', pkg: 'memoirist', create: memoirist },
  { id: 'rou3', label: 'rou3 findRoute', pkg: 'rou3', create: rou3Find },
  { id: 'rou3-compiled', label: 'rou3 compileRouter', pkg: 'rou3', create: rou3Compiled },
  { id: 'rou3-string', label: 'rou3 compileRouterToString', pkg: 'rou3', create: rou3String },
  { id: 'hono-regexp', label: 'hono RegExpRouter', pkg: 'hono', create: honoRegExp },
  { id: 'hono-trie', label: 'hono TrieRouter', pkg: 'hono', create: honoTrie },
  { id: 'baseline', label: '(string + call only)', pkg: null, create: baseline },
]

export const routerById = (id) => ROUTERS.find((r) => r.id === id)
