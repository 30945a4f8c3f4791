/**
 * `fw route:cache clear`: removes what build wrote in a cache folder (write-cache.ts) and nothing
 * else, under the same lock as a build, so that a clear never pulls a generation from under a
 * build that is publishing it.
 */
import { existsSync, statSync } from 'node:fs'
import { readdir, rm, rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { MANIFEST_FILE } from '../shared/cache-format.js'
import { FwError } from '../shared/errors.js'
import { acquireLock, LOCK_FILE } from './cache-lock.js'
import { assertSafeDir, userFacing } from './cache-guard.js'
import { holdsLeftovers, isManifest, readManifest, wroteIt } from './cache-ownership.js'

/**
 * Removes what build wrote in `dir`; returns the removed names (empty when there was nothing).
 * Only a folder whose manifest is fw's counts as a cache, and in it only what build names so:
 * the manifest, entry files that start with fw's banner, and generation folders named as build
 * names them. Anything else there (a user's router.mjs, a folder called generation-old) stays.
 * A folder without a manifest is cleared too when fw's own files say a build or a clear was cut
 * short there (an entry file with fw's banner, or a generation whose index.mjs has it): a clear
 * removes the manifest first, so running it again must finish the job.
 */
export async function clearCache(dir: string): Promise<string[]> {
  const root = assertSafeDir(dir)
  try {
    return await clearFolder(root)
  } catch (error) {
    // No permission to delete there, a read-only disk: the user's to mend, not a bug in fw.
    throw userFacing(
      error,
      root,
      'clear the route cache in',
      'Run the clear as the user who built the cache, or give yours write access to the folder.',
    )
  }
}

async function clearFolder(root: string): Promise<string[]> {
  if (!isFolder(root)) return []
  const hasManifest = existsSync(join(root, MANIFEST_FILE))
  if (hasManifest && !isManifest(await readManifest(root))) {
    throw new FwError(
      'FW_CACHE_UNSAFE_DIR',
      `"${join(root, MANIFEST_FILE)}" is not a manifest fw wrote`,
      {
        hint: 'Point --cache at the folder `fw route:cache build` wrote, such as .fw/cache; nothing was removed.',
      },
    )
  }
  if (!hasManifest && !(await holdsLeftovers(root))) return []
  const release = await acquireLock(root)
  let ordered: string[]
  try {
    const ours: string[] = []
    for (const name of await readdir(root))
      if (name !== MANIFEST_FILE && name !== LOCK_FILE && (await wroteIt(root, name)))
        ours.push(name)
    // The manifest goes first, so an interrupted clear leaves no cache that looks complete.
    const manifest = existsSync(join(root, MANIFEST_FILE)) ? [MANIFEST_FILE] : []
    ordered = [...manifest, ...ours]
    for (const name of ordered) await rm(join(root, name), { recursive: true, force: true })
  } finally {
    await release()
  }
  if ((await readdir(root)).length === 0) await rmdir(root).catch(() => {})
  return ordered
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
