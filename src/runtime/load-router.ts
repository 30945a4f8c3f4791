/**
 * Loads a compiled route cache in production. It parses no pattern and builds no tree: it reads
 * the manifest, imports the generation it names, and checks that the cache belongs to this
 * version of fw and (when the routes function is given) to these routes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { collectRoutes, type Registrar } from '../define/registrar.js'
import {
  CACHE_FORMAT_VERSION,
  GENERATION_NAME,
  MANIFEST_FILE,
  type Manifest,
} from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import { fingerprintRoutes, type RouteRecord } from '../shared/route-record.js'
import type { UrlParams, UrlQuery } from './types.js'

const REBUILD = 'Run `fw route:cache build` (fw serve rebuilds automatically).'

export type MatchResult =
  | { route: RouteInfo; params: Readonly<Record<string, string | number | null>> }
  | { status: 404 }
  | { status: 405; allow: string[] }
  | { status: 400 }

export interface RouteInfo {
  readonly id: number
  readonly method: string
  readonly host: string | null
  readonly path: string
  readonly name: string | null
  readonly middleware: readonly string[]
  readonly handler: string
}

export interface CompiledRouter {
  match(method: string, path: string, host?: string | null): MatchResult
  urlFor(name: string, params?: UrlParams, query?: UrlQuery, absolute?: boolean | string): string
  setBaseUrl(url: string): void
  routes: readonly RouteInfo[]
  manifest: Manifest
  /** The registered routes (with handlers, by route id) when `register` was given. */
  records: readonly RouteRecord[] | null
  registrar: Registrar | null
}

/**
 * Loads the cache in `cacheDir`, failing with FW_CACHE_MISSING or FW_CACHE_STALE when it cannot
 * serve these routes.
 * @example
 * const router = await loadRouter('.fw/cache', { register: routes })
 * router.match('GET', '/users/1') // { route: { name: 'users.show', ... }, params: { id: 1 } }
 */
export async function loadRouter(
  cacheDir: string,
  options: { register?: ((r: Registrar) => void) | undefined } = {},
): Promise<CompiledRouter> {
  assertRequireModule()
  const root = resolve(cacheDir)
  const { manifest, module } = await importActiveGeneration(root, cacheDir)
  if (module.FINGERPRINT !== manifest.fingerprint) {
    throw new FwError(
      'FW_CACHE_STALE',
      `The route cache in ${cacheDir} is inconsistent (manifest and generation differ)`,
      { hint: REBUILD },
    )
  }
  const registrar = options.register ? collectChecked(options.register, manifest, cacheDir) : null
  return {
    match: module.match,
    urlFor: module.urlFor,
    setBaseUrl: module.setBaseUrl,
    routes: module.routes,
    manifest,
    records: registrar?.routes ?? null,
    registrar,
  }
}

/**
 * The shards load through require() of ES modules (Node 20.19+, 22.12+): on an older Node each
 * would look damaged, and no rebuild would help.
 */
function assertRequireModule(): void {
  if ((process.features as { require_module?: boolean }).require_module) return
  throw new FwError(
    'FW_SERVE_CONFIG',
    `fw needs Node.js 20.19+ or 22.12+, where require() loads ES modules (this is ${process.version})`,
    { hint: 'Install a newer Node.js, e.g. the current 22 or 24 LTS.' },
  )
}

/** The generation the manifest names, imported, with the manifest that named it. */
async function importActiveGeneration(
  root: string,
  cacheDir: string,
): Promise<{ manifest: Manifest; module: GenerationModule }> {
  let manifest = readManifest(root, cacheDir)
  for (let attempt = 1; ; attempt++) {
    try {
      return { manifest, module: await importGeneration(root, manifest) }
    } catch (error) {
      // Builds that published twice since the manifest was read pruned its generation: the
      // manifest now names another one, which is the cache to serve. Anything else is damage.
      const now = attempt < GENERATION_ATTEMPTS ? readManifest(root, cacheDir) : manifest
      if (now.generation !== manifest.generation) {
        manifest = now
        continue
      }
      const { code, message } = error as { code?: string; message?: string }
      throw new FwError(
        'FW_CACHE_STALE',
        code === 'FW_CACHE_STALE'
          ? String(message)
          : `The route cache in ${cacheDir} is damaged: ${String(manifest.generation)}/index.mjs cannot be loaded (${message})`,
        { hint: REBUILD, cause: error },
      )
    }
  }
}

/** The routes `register` makes, refused (FW_CACHE_STALE) when they are not the ones built. */
function collectChecked(
  register: (r: Registrar) => void,
  manifest: Manifest,
  cacheDir: string,
): Registrar {
  const registrar = collectRoutes(register)
  if (fingerprintRoutes(registrar.routes) !== manifest.fingerprint) {
    throw new FwError(
      'FW_CACHE_STALE',
      `The routes changed since the route cache in ${cacheDir} was built`,
      { hint: REBUILD },
    )
  }
  return registrar
}

type GenerationModule = CompiledRouter & { FINGERPRINT: string; load?: () => Promise<void> }

// How many generations a boot tries when builds keep replacing the one the manifest named.
const GENERATION_ATTEMPTS = 3

/** The manifest of the cache in `root`, of this fw's format (FW_CACHE_MISSING, FW_CACHE_STALE). */
function readManifest(root: string, cacheDir: string): Manifest {
  const manifest = readCacheManifest(root)
  if (manifest?.formatVersion !== CACHE_FORMAT_VERSION) {
    throw new FwError(
      'FW_CACHE_STALE',
      `The route cache in ${cacheDir} has format ${manifest?.formatVersion ?? 'none'}; this fw reads format ${CACHE_FORMAT_VERSION}`,
      { hint: REBUILD },
    )
  }
  return manifest
}

/**
 * The generation `manifest` names, with every shard and the names loaded: a missing or damaged
 * one fails here, naming it, not requests; and a later build or `route:cache clear` that deletes
 * the generation does not break this process.
 */
async function importGeneration(root: string, manifest: Manifest): Promise<GenerationModule> {
  const generation = String(manifest.generation)
  // Not a path of the manifest's choosing: only a folder build names (generation-<ms>-<hex>).
  if (!GENERATION_NAME.test(generation)) throw new Error('not a folder build writes')
  const module = (await import(
    pathToFileURL(join(root, generation, 'index.mjs')).href
  )) as GenerationModule
  await module.load?.()
  return module
}

/** Whether every source file recorded at build time still has the same content. */
export function isCacheFresh(cacheDir: string): boolean {
  const root = resolve(cacheDir)
  try {
    const manifest = readCacheManifest(root)
    if (manifest?.formatVersion !== CACHE_FORMAT_VERSION) return false
    return Object.entries(manifest.inputs).every(([file, hash]) => {
      const text = readFileSync(resolve(root, file))
      return createHash('sha256').update(text).digest('hex') === hash
    })
  } catch {
    return false
  }
}

function readCacheManifest(root: string): Manifest | null {
  let text: string
  try {
    text = readFileSync(join(root, MANIFEST_FILE), 'utf8')
  } catch {
    throw new FwError('FW_CACHE_MISSING', `No route cache in ${root}`, { hint: REBUILD })
  }
  try {
    return JSON.parse(text) as Manifest | null
  } catch {
    throw new FwError('FW_CACHE_STALE', `The route cache manifest in ${root} is not valid JSON`, {
      hint: REBUILD,
    })
  }
}
