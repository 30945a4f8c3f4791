/**
 * Writes a build to the cache directory so that a reader never sees a half-written cache: the
 * generation folder is written under a temporary name and renamed, then the entry, then the
 * manifest last (each by atomic rename). Older generations stay for processes still using them
 * (the two newest are kept). `clearCache` deletes only what a build wrote.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, parse, resolve } from 'node:path'
import {
  ENTRY_FILE,
  ENTRY_TYPES_FILE,
  GENERATION_PREFIX,
  ROUTES_ENTRY_FILE,
  MANIFEST_FILE,
  type Manifest,
} from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import type { BuildOutput } from './build.js'

const KEEP_GENERATIONS = 2
const TMP_PREFIX = '.tmp-'

export interface WriteResult {
  /** False when the cache already held this exact build and nothing was rewritten. */
  written: boolean
  manifest: Manifest
}

/** Publishes a build into `dir`. */
export async function writeCache(dir: string, build: BuildOutput): Promise<WriteResult> {
  const root = assertSafeDir(dir)
  await mkdir(root, { recursive: true })
  const previous = await readManifest(root)
  if (previous === null) await assertOnlyOurs(root)
  if (
    previous?.formatVersion === build.manifest.formatVersion &&
    previous.contentHash === build.manifest.contentHash &&
    previous.fingerprint === build.manifest.fingerprint &&
    existsSync(join(root, previous.generation, 'index.mjs')) &&
    existsSync(join(root, ENTRY_FILE))
  ) {
    return { written: false, manifest: previous }
  }
  const tmp = join(root, `${TMP_PREFIX}${randomBytes(6).toString('hex')}`)
  try {
    await mkdir(tmp)
    await Promise.all([...build.files].map(([name, text]) => writeFile(join(tmp, name), text)))
    await rename(tmp, join(root, build.generation))
  } catch (error) {
    await rm(tmp, { recursive: true, force: true })
    throw error
  }
  await writeAtomic(join(root, ENTRY_TYPES_FILE), await build.types())
  if (build.routesEntry !== null) await writeAtomic(join(root, ROUTES_ENTRY_FILE), build.routesEntry)
  await writeAtomic(join(root, ENTRY_FILE), build.entry)
  await writeAtomic(join(root, MANIFEST_FILE), JSON.stringify(build.manifest, null, 2) + '\n')
  await pruneGenerations(root, build.generation)
  return { written: true, manifest: build.manifest }
}

/** Removes what build wrote in `dir`; returns the removed names (empty when there was nothing). */
export async function clearCache(dir: string): Promise<string[]> {
  const root = assertSafeDir(dir)
  if (!existsSync(join(root, MANIFEST_FILE))) return []
  const ours = (await readdir(root)).filter(isOurs)
  // The manifest goes first, so an interrupted clear leaves no cache that looks complete.
  const ordered = [MANIFEST_FILE, ...ours.filter((n) => n !== MANIFEST_FILE)]
  for (const name of ordered) await rm(join(root, name), { recursive: true, force: true })
  if ((await readdir(root)).length === 0) await rmdir(root)
  return ordered
}

export async function readManifest(root: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(join(root, MANIFEST_FILE), 'utf8')) as Manifest
  } catch {
    return null
  }
}

/** Refuses '', '/', '.', '..', a filesystem root, the home directory and the working directory. */
export function assertSafeDir(dir: string): string {
  const trimmed = dir.trim()
  const root = resolve(trimmed)
  const dangerous =
    ['', '.', '..', '/'].includes(trimmed.replace(/\/+$/, '') || '/') ||
    root === parse(root).root ||
    root === homedir() ||
    root === process.cwd()
  if (dangerous) {
    throw new FwError('FW_CACHE_UNSAFE_DIR', `Refusing to use "${dir}" as the route cache directory`, {
      hint: 'Point --cache at a folder of its own, such as .fw/cache.',
    })
  }
  return root
}

async function assertOnlyOurs(root: string): Promise<void> {
  const foreign = (await readdir(root)).filter((name) => !isOurs(name))
  if (foreign.length > 0) {
    throw new FwError('FW_CACHE_UNSAFE_DIR', `"${root}" holds files fw did not write (${foreign.slice(0, 3).join(', ')})`, {
      hint: 'Point --cache at an empty folder or one fw built before, such as .fw/cache.',
    })
  }
}

function isOurs(name: string): boolean {
  return (
    name === MANIFEST_FILE ||
    name === ENTRY_FILE ||
    name === ENTRY_TYPES_FILE ||
    name === ROUTES_ENTRY_FILE ||
    name.startsWith(GENERATION_PREFIX) ||
    name.startsWith(TMP_PREFIX) ||
    /^(router\.mjs|router\.d\.mts|routes\.mjs|manifest\.json)\.tmp-[0-9a-f]+$/.test(name)
  )
}

async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`
  await writeFile(tmp, text)
  await rename(tmp, file)
}

async function pruneGenerations(root: string, current: string): Promise<void> {
  const generations = (await readdir(root))
    .filter((n) => n.startsWith(GENERATION_PREFIX) && n !== current)
    .sort(byBuildTime)
    .reverse()
  for (const old of generations.slice(KEEP_GENERATIONS - 1)) {
    await rm(join(root, old), { recursive: true, force: true })
  }
}

function byBuildTime(a: string, b: string): number {
  const time = (n: string): number => Number(n.slice(GENERATION_PREFIX.length).split('-')[0])
  return time(a) - time(b)
}
