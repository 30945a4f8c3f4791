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
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path'
import {
  ENTRY_FILE,
  ENTRY_TYPES_FILE,
  GENERATED_MARK,
  GENERATION_NAME,
  ROUTES_ENTRY_FILE,
  MANIFEST_FILE,
  type Manifest,
} from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import { writeFailure } from '../shared/fs-errors.js'
import type { BuildOutput } from './build.js'
import { acquireLock, LOCK_FILE, LOCK_NAME } from './cache-lock.js'

const TMP_PREFIX = '.tmp-'

export interface WriteResult {
  /** False when the cache already held this exact build and nothing was rewritten. */
  written: boolean
  manifest: Manifest
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

/**
 * A file-system failure the user can mend as FW_CACHE_WRITE naming the folder (`doing` says what
 * fw was doing there); anything else unchanged. Also a --cache that is a symbolic link to a
 * folder that does not exist: mkdir then fails with ENOENT, which says nothing about the link.
 * @example
 * throw userFacing(error, root, 'write the route cache to')
 * // FwError FW_CACHE_WRITE: Cannot write the route cache to "/app/.fw/cache": permission denied (EACCES)
 */
export function userFacing(
  error: unknown,
  root: string,
  doing: string,
  hint = 'Point --cache at a folder fw can create and write, such as .fw/cache.',
): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code
  const target = code === 'ENOENT' ? danglingTarget(root) : undefined
  if (target !== undefined) {
    return new FwError(
      'FW_CACHE_WRITE',
      `Cannot ${doing} "${root}": it is a symbolic link to "${target}", which does not exist`,
      { hint: `Create "${target}", or point --cache at a folder such as .fw/cache.`, cause: error },
    )
  }
  const cause = writeFailure(error)
  if (cause === undefined) return error
  const full = code === 'ENOSPC' || code === 'EDQUOT'
  return new FwError('FW_CACHE_WRITE', `Cannot ${doing} "${root}": ${cause} (${code})`, {
    hint: full ? 'Free some space, or point --cache at a folder on another disk.' : hint,
    cause: error,
  })
}

/** Where the symbolic link `path` points, when that does not exist; else undefined. */
function danglingTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink() || existsSync(path)) return undefined
    return resolve(dirname(path), readlinkSync(path))
  } catch {
    return undefined
  }
}

async function publish(root: string, build: BuildOutput): Promise<WriteResult> {
  await mkdir(root, { recursive: true })
  const release = await acquireLock(root)
  try {
    return await publishLocked(root, build)
  } finally {
    await release()
  }
}

async function publishLocked(root: string, build: BuildOutput): Promise<WriteResult> {
  const read = await readManifest(root)
  // A manifest.json fw did not write (a web app's) is the user's: refused with the rest.
  const previous = isManifest(read) ? read : null
  if (previous === null) await assertOnlyOurs(root)
  if (
    previous?.formatVersion === build.manifest.formatVersion &&
    previous.contentHash === build.manifest.contentHash &&
    previous.fingerprint === build.manifest.fingerprint &&
    (await isIntact(root, previous.generation, build))
  ) {
    return { written: false, manifest: await recordInputs(root, previous, build.manifest.inputs) }
  }
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
  await pruneGenerations(root, [build.generation, previous?.generation])
  return { written: true, manifest: build.manifest }
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
  if (build.routesEntry !== null) {
    if (!(await same(join(root, ROUTES_ENTRY_FILE), named(build.routesEntry)))) return false
  }
  const types = await readFile(join(root, ENTRY_TYPES_FILE), 'utf8').catch(() => '')
  return types.startsWith(GENERATED_MARK)
}

export async function readManifest(root: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(join(root, MANIFEST_FILE), 'utf8')) as Manifest
  } catch {
    return null
  }
}

/**
 * Refuses '', '/', '.', '..', and any folder that holds the working directory or the home
 * directory (`../.`, `a/..` or an absolute path to a parent are '..' too): clearing one of those
 * would reach beyond the cache. Also anything under /proc, /sys and /dev. The same holds for the
 * folder symbolic links lead to: `--cache link` where link points at / or at the home folder.
 */
export function assertSafeDir(dir: string): string {
  const trimmed = dir.trim()
  const root = resolve(trimmed)
  const real = realPath(root)
  const dangerous =
    ['', '.', '..', '/'].includes(trimmed.replace(/\/+$/, '') || '/') ||
    isDangerous(root) ||
    isDangerous(real)
  if (dangerous) {
    const leadsTo = real === root ? '' : ` (a link to "${real}")`
    throw new FwError(
      'FW_CACHE_UNSAFE_DIR',
      `Refusing to use "${dir}"${leadsTo} as the route cache directory`,
      {
        hint: 'Point --cache at a folder of its own, such as .fw/cache.',
      },
    )
  }
  return root
}

function isDangerous(root: string): boolean {
  const home = homedir()
  return (
    root === parse(root).root ||
    holds(root, home) ||
    holds(root, realPath(home)) ||
    holds(root, process.cwd()) ||
    VIRTUAL_FS.test(root)
  )
}

/** `path` with symbolic links resolved, as far as it exists (the rest is appended as written). */
function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    const parent = dirname(path)
    return parent === path ? path : join(realPath(parent), basename(path))
  }
}

// Kernel file systems: nothing to write there, and Node 20's recursive mkdir under /proc spins
// forever instead of failing.
const VIRTUAL_FS = /^\/(proc|sys|dev)(\/|$)/

/** Whether `folder` is `inner` or one of its ancestors. */
function holds(folder: string, inner: string): boolean {
  const path = relative(folder, inner)
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path))
}

// What an OS or a version control system puts in any folder: kept, never in the way of a build.
const METADATA = new Set([
  '.DS_Store',
  'Thumbs.db',
  'desktop.ini',
  '.gitignore',
  '.gitkeep',
  '.keep',
])

/**
 * Refuses a folder without fw's manifest that holds anything fw did not write, judged as clear
 * judges it: an entry file by its banner, a manifest by its shape (a user's router.mjs, routes.mjs
 * or web app manifest.json was overwritten when only the names were compared).
 */
async function assertOnlyOurs(root: string): Promise<void> {
  // A manifest.json fw cannot read beside fw's own files is a damaged one of fw's (a full disk, a
  // bad copy): the build that replaces it is the fix, not a refusal.
  const built = await holdsLeftovers(root)
  const foreign: string[] = []
  for (const name of await readdir(root)) {
    const ours = (name === MANIFEST_FILE && built) || (await wroteIt(root, name))
    if (!METADATA.has(name) && !ours) foreign.push(name)
  }
  if (foreign.length > 0) {
    throw new FwError(
      'FW_CACHE_UNSAFE_DIR',
      `"${root}" holds files fw did not write (${foreign.slice(0, 3).join(', ')})`,
      {
        hint: 'Point --cache at an empty folder or one fw built before, such as .fw/cache.',
      },
    )
  }
}

// What build names: generation-<ms>-<8 hex> (build.ts), .tmp-<12 hex> while a generation is
// written, <entry>.tmp-<12 hex> while an entry file is (stageEntries), and the lock files
// (LOCK_NAME, cache-lock.ts).
const TMP_NAME = /^\.tmp-[0-9a-f]{12}$/
const ENTRY_TMP_NAME = /^(router\.mjs|router\.d\.mts|routes\.mjs|manifest\.json)\.tmp-[0-9a-f]{12}$/
export const ENTRY_FILES = [ENTRY_FILE, ENTRY_TYPES_FILE, ROUTES_ENTRY_FILE]

/** Whether build could have written an entry named `name` (what a fresh build may sit beside). */
export function isOurs(name: string): boolean {
  return (
    name === MANIFEST_FILE ||
    ENTRY_FILES.includes(name) ||
    GENERATION_NAME.test(name) ||
    TMP_NAME.test(name) ||
    ENTRY_TMP_NAME.test(name) ||
    LOCK_NAME.test(name)
  )
}

/** Whether a folder without a manifest holds what only fw writes: a bannered entry or generation. */
export async function holdsLeftovers(root: string): Promise<boolean> {
  for (const name of await readdir(root)) {
    const bannered = ENTRY_FILES.includes(name)
      ? join(root, name)
      : GENERATION_NAME.test(name)
        ? join(root, name, 'index.mjs')
        : null
    if (bannered === null) continue
    const text = await readFile(bannered, 'utf8').catch(() => '')
    if (text.startsWith(GENERATED_MARK)) return true
  }
  return false
}

/** Whether build wrote `name` in `root`: its name, and for an entry file or the manifest, its text. */
export async function wroteIt(root: string, name: string): Promise<boolean> {
  if (!isOurs(name)) return false
  if (name === MANIFEST_FILE) return isManifest(await readManifest(root))
  if (!ENTRY_FILES.includes(name)) return true
  const text = await readFile(join(root, name), 'utf8').catch(() => '')
  return text.startsWith(GENERATED_MARK)
}

/** Whether `value` has the shape of the manifest build writes. */
export function isManifest(value: unknown): value is Manifest {
  const m = value as Partial<Manifest> | null
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof m.formatVersion === 'number' &&
    typeof m.generation === 'string' &&
    GENERATION_NAME.test(m.generation) &&
    typeof m.fingerprint === 'string' &&
    Array.isArray(m.shards)
  )
}

/**
 * Deletes the generations other than `keep` (the new one, and the one the previous manifest named,
 * which running processes may still load shards from), and what builds that died left behind. Only
 * called under the lock, so no other build is writing a temporary file or folder now.
 */
async function pruneGenerations(root: string, keep: (string | undefined)[]): Promise<void> {
  for (const name of await readdir(root)) {
    const leftover =
      TMP_NAME.test(name) ||
      ENTRY_TMP_NAME.test(name) ||
      (LOCK_NAME.test(name) && name !== LOCK_FILE)
    if (leftover || (GENERATION_NAME.test(name) && !keep.includes(name)))
      await rm(join(root, name), { recursive: true, force: true })
  }
}
