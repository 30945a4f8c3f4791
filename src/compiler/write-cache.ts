/**
 * Writes a build to the cache directory so that a reader never sees a half-written cache: the
 * generation folder is written under a temporary name and renamed, then the entries, then the
 * manifest last (each by atomic rename). The generation the previous manifest named stays for
 * processes still using it. `clearCache` (clear-cache.ts) deletes only what a build wrote.
 *
 * Builds that run at once (two terminals, a watcher and a manual build, parallel CI steps) take
 * turns: publishing (read the previous manifest, write, prune) runs under an exclusive lock file
 * in the cache folder. Without it, one build's prune deleted the generation another had just
 * published, and router.mjs and manifest.json could each be left naming a different build.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  ENTRY_FILE,
  ENTRY_TYPES_FILE,
  GENERATED_MARK,
  ROUTES_ENTRY_FILE,
  MANIFEST_FILE,
  type Manifest,
} from '../shared/cache-format.js'
import type { BuildOutput } from './build.js'
import { assertSafeDir, userFacing } from './cache-guard.js'
import { acquireLock } from './cache-lock.js'
import {
  assertOnlyOurs,
  isManifest,
  laterGeneration,
  pruneGenerations,
  pruneUnpublished,
  readManifest,
} from './cache-ownership.js'

// Where clear-cache.ts and the compiler's index have always imported them from.
const TMP_PREFIX = '.tmp-'

export interface WriteResult {
  /** False when the cache already held this exact build and nothing was rewritten. */
  written: boolean
  manifest: Manifest
  /** What went wrong after the build was published (old generations left behind). */
  warning?: string
}

/** Publishes a build into `dir`. */
export async function writeCache(dir: string, build: BuildOutput): Promise<WriteResult> {
  const root = assertSafeDir(dir)
  try {
    return await publish(root, build)
  } catch (error) {
    throw userFacing(error, root, 'write the route cache to')
  }
}

async function publish(root: string, build: BuildOutput): Promise<WriteResult> {
  await mkdir(root, { recursive: true })
  let release: () => Promise<void>
  try {
    release = await acquireLock(root)
  } catch (error) {
    // A cache shipped read-only (built in CI, served by another user or from a read-only image)
    // that already holds this exact build has nothing to write: no lock is needed to say so.
    const upToDate = NO_WRITE.has((error as NodeJS.ErrnoException).code ?? '')
      ? await unchanged(root, build)
      : null
    if (upToDate === null) throw error
    return { written: false, manifest: upToDate }
  }
  try {
    return await publishLocked(root, build)
  } finally {
    await release()
  }
}

const NO_WRITE = new Set(['EACCES', 'EPERM', 'EROFS'])

/** The manifest of `root` when it holds `build` as it is, its inputs' hashes included; else null. */
async function unchanged(root: string, build: BuildOutput): Promise<Manifest | null> {
  const read = await readManifest(root)
  if (!isManifest(read) || !(await isSameBuild(root, read, build))) return null
  return JSON.stringify(read.inputs) === JSON.stringify(build.manifest.inputs) ? read : null
}

/** Whether `previous` (the cache's manifest) names this build, every file of it in place. */
async function isSameBuild(root: string, previous: Manifest, build: BuildOutput): Promise<boolean> {
  return (
    previous.formatVersion === build.manifest.formatVersion &&
    previous.contentHash === build.manifest.contentHash &&
    previous.fingerprint === build.manifest.fingerprint &&
    (await isIntact(root, previous.generation, build))
  )
}

async function publishLocked(root: string, build: BuildOutput): Promise<WriteResult> {
  const read = await readManifest(root)
  // A manifest.json fw did not write (a web app's) is the user's: refused with the rest.
  const previous = isManifest(read) ? read : null
  if (previous === null) await assertOnlyOurs(root)
  if (previous !== null && (await isSameBuild(root, previous, build))) {
    const manifest = await recordInputs(root, previous, build.manifest.inputs)
    return {
      written: false,
      manifest,
      ...(await tidied(root, () => pruneUnpublished(root, previous.generation))),
    }
  }
  // Named after every generation already here, whatever the clock says (see laterGeneration).
  const name = await laterGeneration(root, build.generation, previous?.generation)
  return publishNew(root, renamed(build, name), previous)
}

/** Writes the generation, then the entries, the manifest last; then prunes. */
async function publishNew(
  root: string,
  build: BuildOutput,
  previous: Manifest | null,
): Promise<WriteResult> {
  const generation = join(root, build.generation)
  const tmp = join(root, `${TMP_PREFIX}${randomBytes(6).toString('hex')}`)
  let staged: StagedEntry[]
  try {
    await mkdir(tmp)
    await Promise.all([...build.files].map(([name, text]) => writeFile(join(tmp, name), text)))
    await rename(tmp, generation)
    staged = await stageEntries(root, build)
  } catch (error) {
    // A failed build leaves the previous cache as it was: nothing names the new generation yet.
    await rm(tmp, { recursive: true, force: true })
    await rm(generation, { recursive: true, force: true })
    throw error
  }
  for (const entry of staged) await rename(entry.tmp, entry.file)
  // A build of routes held in memory ships no routes.mjs: one an earlier build of a routes file
  // left would name that build's generation, which a later prune deletes (server.mjs importing
  // it then failed on a missing module), and routes the cache no longer holds.
  if (build.routesEntry === null) await rm(join(root, ROUTES_ENTRY_FILE), { force: true })
  const prune = () => pruneGenerations(root, [build.generation, previous?.generation])
  return { written: true, manifest: build.manifest, ...(await tidied(root, prune)) }
}

/** `build` as it is written under the name `generation`, which its entries and manifest give. */
function renamed(build: BuildOutput, generation: string): BuildOutput {
  if (generation === build.generation) return build
  const named = (text: string): string => text.replaceAll(build.generation, generation)
  return {
    ...build,
    generation,
    entry: named(build.entry),
    routesEntry: build.routesEntry === null ? null : named(build.routesEntry),
    manifest: { ...build.manifest, generation },
  }
}

/**
 * Removes the generations and leftovers a build no longer needs: after a publish, all but the
 * new generation and the one before (running processes may load shards from it); when the cache
 * was up to date, what builds cut short since left. Published already, the build has succeeded:
 * a folder that cannot be removed (another user's, from a `sudo fw route:cache build`) is a
 * warning, not an error that says the build failed.
 */
async function tidied(root: string, prune: () => Promise<void>): Promise<{ warning?: string }> {
  try {
    await prune()
    return {}
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    return {
      warning: `the older generations in ${root} could not all be removed (${reason}): remove them by hand, or run fw route:cache clear as their owner`,
    }
  }
}

interface StagedEntry {
  tmp: string
  file: string
}

/**
 * The up-to-date cache's manifest with the sources' hashes as they are now. An edit that leaves
 * the bundle the same (a comment) changes them; kept as they were, isCacheFresh() stayed false
 * and `fw serve` rebuilt at every start. Written by atomic rename, as a build writes it.
 */
async function recordInputs(
  root: string,
  previous: Manifest,
  inputs: Manifest['inputs'],
): Promise<Manifest> {
  if (JSON.stringify(previous.inputs) === JSON.stringify(inputs)) return previous
  const manifest = { ...previous, inputs }
  const tmp = join(root, `${MANIFEST_FILE}.tmp-${randomBytes(6).toString('hex')}`)
  try {
    await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n')
    await rename(tmp, join(root, MANIFEST_FILE))
  } catch (error) {
    await rm(tmp, { force: true })
    throw error
  }
  return manifest
}

/**
 * Writes every entry file under a temporary name, to be renamed in only once all are written (a
 * full disk then changes none of them): router.mjs before manifest.json, the manifest last, so a
 * reader that finds the new manifest finds router.mjs naming the same generation.
 */
async function stageEntries(root: string, build: BuildOutput): Promise<StagedEntry[]> {
  const texts: [string, string][] = [[ENTRY_TYPES_FILE, await build.types()]]
  if (build.routesEntry !== null) texts.push([ROUTES_ENTRY_FILE, build.routesEntry])
  texts.push([ENTRY_FILE, build.entry])
  texts.push([MANIFEST_FILE, JSON.stringify(build.manifest, null, 2) + '\n'])
  const suffix = `.tmp-${randomBytes(6).toString('hex')}`
  const staged = texts.map(([name]) => ({ tmp: join(root, name + suffix), file: join(root, name) }))
  try {
    await Promise.all(texts.map(([, text], i) => writeFile(staged[i]!.tmp, text)))
  } catch (error) {
    await Promise.all(staged.map((entry) => rm(entry.tmp, { force: true })))
    throw error
  }
  return staged
}

/**
 * Whether the cache still holds every file of `generation` as this build would write it (the same
 * build: its content hash matched) and fw's entry files naming it, so that "up to date" leaves
 * nothing missing or damaged: a deleted router.d.mts or routes.mjs (which server.mjs imports), or
 * a shard emptied or edited since (the error loading it says to run this build), is written again.
 */
async function isIntact(root: string, generation: string, build: BuildOutput): Promise<boolean> {
  const same = async (file: string, text: string): Promise<boolean> =>
    (await readFile(file, 'utf8').catch(() => null)) === text
  for (const [name, text] of build.files) {
    if (!(await same(join(root, generation, name), text))) return false
  }
  // The entries name the generation: this build's, as they would name the one kept.
  const named = (text: string): string => text.replaceAll(build.generation, generation)
  if (!(await same(join(root, ENTRY_FILE), named(build.entry)))) return false
  const routesEntry = await readFile(join(root, ROUTES_ENTRY_FILE), 'utf8').catch(() => null)
  if (routesEntry !== (build.routesEntry === null ? null : named(build.routesEntry))) return false
  const types = await readFile(join(root, ENTRY_TYPES_FILE), 'utf8').catch(() => '')
  return types.startsWith(GENERATED_MARK)
}
