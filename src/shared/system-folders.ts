/**
 * Folders fw never writes into as a whole: the file-system root, the home folder and the folders
 * holding it, and the kernel's /proc, /sys and /dev. `fw route:cache clear` would reach beyond its
 * cache there, and `fw init` would make every project below part of the new app.
 */
import { realpathSync } from 'node:fs'
import { homedir, userInfo } from 'node:os'
import { basename, dirname, isAbsolute, join, parse, relative, sep } from 'node:path'

// Kernel file systems: nothing to write there, and Node 20's recursive mkdir under /proc spins
// forever instead of failing.
const VIRTUAL_FS = /^\/(proc|sys|dev)(\/|$)/

/**
 * Why `path` (absolute) is one of those folders, or undefined. The home folder counts as written
 * and as its links resolve (/home is a link on FreeBSD).
 * @example
 * systemFolder('/') // 'it is the file-system root'
 */
export function systemFolder(path: string): string | undefined {
  if (path === parse(path).root) return 'it is the file-system root'
  if (VIRTUAL_FS.test(path)) return 'it is a system folder'
  const home = homeFolder()
  for (const folder of home === '' ? [] : [home, realPath(home)]) {
    if (path === folder) return 'it is your home folder'
    if (holds(path, folder)) return 'it holds your home folder'
  }
  return undefined
}

/** Whether `folder` is `inner` or one of its ancestors. */
export function holds(folder: string, inner: string): boolean {
  const path = relative(folder, inner)
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path))
}

/** `path` with symbolic links resolved, as far as it exists (the rest is appended as written). */
export function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    const parent = dirname(path)
    return parent === path ? path : join(realPath(parent), basename(path))
  }
}

/**
 * HOME; when it is empty, the user's entry in the system's list of users (relative() would read
 * '' as the working folder); '' when there is none.
 */
function homeFolder(): string {
  const home = homedir()
  if (home !== '') return home
  try {
    return userInfo().homedir
  } catch {
    return ''
  }
}
