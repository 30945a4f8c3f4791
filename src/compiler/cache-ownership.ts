/**
 * What build writes in a cache folder, told by name and by content (an entry file's banner, the
 * manifest's shape): a build refuses a folder holding anything else (assertOnlyOurs), a clear
 * removes only this (clear-cache.ts), and a publish prunes old generations and what builds that
 * died left behind (pruneGenerations).
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  ENTRY_FILE,
  ENTRY_TYPES_FILE,
  GENERATED_MARK,
  GENERATION_NAME,
  GENERATION_PREFIX,
  ROUTES_ENTRY_FILE,
  MANIFEST_FILE,
  type Manifest,
} from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import { LOCK_FILE, LOCK_NAME } from './cache-lock.js'

export async function readManifest(root: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(join(root, MANIFEST_FILE), 'utf8')) as Manifest
  } catch {
    return null
  }
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
export async function assertOnlyOurs(root: string): Promise<void> {
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
// written, <entry>.tmp-<12 hex> while an entry file is (stageEntries, write-cache.ts), and the
// lock files (LOCK_NAME, cache-lock.ts).
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
export async function pruneGenerations(root: string, keep: (string | undefined)[]): Promise<void> {
  await prune(root, (generation) => !keep.includes(generation))
}

/**
 * Deletes what builds cut short after `published` left (the cache was up to date, so nothing
 * else is to go): temporary files and folders, and generation folders written after it, which
 * nothing names and no process can hold. A Ctrl-C'd build left one each time, kept for good.
 * "After" is told by the number in the names, which only grow (see laterGeneration), not by
 * the clock: the generation before the published one is kept even when it was built before
 * the clock stepped back.
 */
export async function pruneUnpublished(root: string, published: string): Promise<void> {
  const after = bornAt(published)
  await prune(root, (generation) => generation !== published && bornAt(generation) >= after)
}

/**
 * The name a new generation is written under: `name` (`generation-<now>-<hex>`), unless a
 * generation in `root`, or the one `named` by the manifest, has as large a number (the clock
 * stepped back since it was built: NTP, a resumed VM, a date set by hand); then that number plus
 * one. Called under the lock, where every generation is written, so the numbers only grow and
 * pruneUnpublished tells a generation written after the published one (what a build cut short
 * left) from the one published before it (running processes may hold it). Told by the clock,
 * a step back turned them around: the one before was deleted, and the leftovers were kept.
 */
export async function laterGeneration(
  root: string,
  name: string,
  named: string | undefined,
): Promise<string> {
  const names = (await readdir(root)).filter((entry) => GENERATION_NAME.test(entry))
  if (named !== undefined && GENERATION_NAME.test(named)) names.push(named)
  // A number past 2^53 (no build's) would not survive the + 1.
  const latest = Math.max(-1, ...names.map(bornAt).filter(Number.isSafeInteger))
  if (bornAt(name) > latest) return name
  return `${GENERATION_PREFIX}${latest + 1}${name.slice(name.lastIndexOf('-'))}`
}

async function prune(root: string, goes: (generation: string) => boolean): Promise<void> {
  for (const name of await readdir(root)) {
    const leftover =
      TMP_NAME.test(name) ||
      ENTRY_TMP_NAME.test(name) ||
      (LOCK_NAME.test(name) && name !== LOCK_FILE)
    if (leftover || (GENERATION_NAME.test(name) && goes(name)))
      await rm(join(root, name), { recursive: true, force: true })
  }
}

/** When a generation was built: the milliseconds in its name (`generation-<ms>-<hex>`). */
function bornAt(generation: string): number {
  return Number(generation.slice(GENERATION_PREFIX.length, generation.lastIndexOf('-')))
}
