/**
 * Guards for the cache folder a build writes and a clear empties (write-cache.ts, clear-cache.ts):
 * which folders fw refuses to use at all, and how a file-system failure there is told to the user.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { FwError } from '../shared/errors.js'
import { writeFailure } from '../shared/fs-errors.js'
import { holds, realPath, systemFolder } from '../shared/system-folders.js'

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
  return systemFolder(root) !== undefined || holds(root, process.cwd())
}
