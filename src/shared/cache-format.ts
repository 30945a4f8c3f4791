/** The layout of the generated cache, shared by the writer (compiler) and the reader (runtime). */

/** Bumped whenever generated code or the manifest changes shape; a mismatch forces a rebuild. */
export const CACHE_FORMAT_VERSION = 1

export const MANIFEST_FILE = 'manifest.json'
export const ENTRY_FILE = 'router.mjs'
export const ENTRY_TYPES_FILE = 'router.d.mts'
export const ROUTES_ENTRY_FILE = 'routes.mjs'
export const GENERATION_PREFIX = 'generation-'

export interface ShardInfo {
  file: string
  host: string | null
  bucket: string
  routes: number
  sha256: string
}

export interface Manifest {
  formatVersion: number
  generation: string
  fingerprint: string
  /** sha256 over the generation's files, to skip rewriting an unchanged build. */
  contentHash: string
  routeCount: number
  shards: ShardInfo[]
  /** sha256 of every source file the routes file was built from, by path relative to the cache. */
  inputs: Record<string, string>
  builtAt: string
}
