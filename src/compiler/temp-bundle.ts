/**
 * Where the temporary bundle of a routes or config file goes: the bundle's package imports must
 * resolve as they would from the user's file, and Node resolves them from the importing file's
 * folder upwards. So it is written
 * under `<project>/node_modules/.cache/fw/` (the nearest folder at or above the file that has a
 * node_modules; resolution from there walks up to that same node_modules, as babel's and
 * eslint's caches rely on), never into the user's source folder; without any node_modules
 * nothing could resolve from beside the file either, so it goes to the OS temp folder. Only a
 * bundle that imports its own package by name (a self-reference, resolved through the nearest
 * package.json, which node_modules cuts off) is still written beside the file, as is any bundle
 * whose preferred folder cannot be written. The file is created private (0600: a config file may
 * hold secrets), removed after the import, and also on exit or SIGINT/SIGTERM during a slow load.
 */
import { existsSync, readFileSync, statSync, unlinkSync } from 'node:fs'
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { displayPath } from '../define/location.js'
import { FwError } from '../shared/errors.js'
import { writeFailure } from '../shared/fs-errors.js'

/**
 * The folders to write the bundle of `file` to, best first (see the comment at the top of this file).
 * @example
 * tempFolders('/app/src/routes.ts', ['fw']) // ['/app/node_modules/.cache/fw', '/app/src']
 */
export function tempFolders(file: string, packages: readonly string[]): string[] {
  const beside = dirname(file)
  const own = ownPackageName(beside)
  const selfReference = own !== null && packages.some((p) => p === own || p.startsWith(own + '/'))
  if (selfReference) return [beside]
  const modules = nearestNodeModules(beside)
  if (modules !== null) return [join(modules, '.cache', 'fw'), beside]
  // No node_modules: no package can resolve from beside the file either (ESM ignores NODE_PATH).
  return [tmpdir(), beside]
}

function nearestNodeModules(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules')
    if (isFolder(candidate)) return candidate
    if (dirname(dir) === dir) return null
  }
}

/** The name in the package.json that scopes `from` (what a self-reference resolves), or null. */
function ownPackageName(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }
        return typeof name === 'string' && name !== '' ? name : null
      } catch {
        return null
      }
    }
    if (basename(dir) === 'node_modules' || dirname(dir) === dir) return null
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Writes the bundle to the first of `folders` that takes it (created as needed); when none does,
 * FW_TEMP_WRITE naming the folders and the errno. `file` is the module being loaded.
 */
export async function writeTemporary(
  folders: readonly string[],
  name: string,
  code: string,
  file: string,
): Promise<string> {
  const failures: { folder: string; error: NodeJS.ErrnoException }[] = []
  for (const folder of folders) {
    const path = join(folder, name)
    try {
      await mkdir(folder, { recursive: true })
      track(path)
      await writeFile(path, code, { flag: 'wx', mode: 0o600 })
      if (folder.endsWith(join('node_modules', '.cache', 'fw'))) void sweep(folder)
      return path
    } catch (error) {
      untrack(path)
      failures.push({ folder, error: error as NodeJS.ErrnoException })
    }
  }
  const [first] = failures
  const why = (f: (typeof failures)[number]): string =>
    `${writeFailure(f.error) ?? f.error.message} (${f.error.code ?? 'unknown error'})`
  const tried = failures
    .map((f) => `"${displayPath(f.folder) || '.'}": ${why(f)}`)
    .join('; nor to ')
  throw new FwError(
    'FW_TEMP_WRITE',
    `Cannot write the temporary bundle of ${displayPath(file)} to ${tried}`,
    {
      hint: `fw imports ${basename(file)} from a temporary bundle: let the user running fw create and write ${displayPath(first?.folder ?? dirname(file)) || '.'}.`,
      ...(first ? { cause: first.error } : {}),
    },
  )
}

const STALE_MS = 24 * 60 * 60 * 1000

/** Removes bundles a killed process (SIGKILL) left in our cache folder a day or more ago. */
async function sweep(folder: string): Promise<void> {
  try {
    for (const entry of await readdir(folder)) {
      if (!/\.fw-\d+-[0-9a-f]+\.mjs$/.test(entry)) continue
      const path = join(folder, entry)
      if (Date.now() - (await stat(path)).mtimeMs > STALE_MS) await rm(path, { force: true })
    }
  } catch {
    // Only housekeeping.
  }
}

// The temporary files written and not yet removed: removed on exit, and on SIGINT/SIGTERM (where
// no exit handler runs), after which the signal takes its default course unless someone else
// (fw serve's drain) listens for it.
const inFlight = new Set<string>()
const SIGNALS = ['SIGINT', 'SIGTERM'] as const
let exitHooked = false

function track(path: string): void {
  inFlight.add(path)
  if (!exitHooked) {
    process.on('exit', removeInFlight)
    exitHooked = true
  }
  if (inFlight.size === 1) for (const signal of SIGNALS) process.on(signal, onSignal)
}

export function untrack(path: string): void {
  if (!inFlight.delete(path) || inFlight.size > 0) return
  for (const signal of SIGNALS) process.off(signal, onSignal)
}

function removeInFlight(): void {
  for (const path of inFlight) {
    try {
      unlinkSync(path)
    } catch {
      // Already gone.
    }
  }
  inFlight.clear()
}

function onSignal(signal: NodeJS.Signals): void {
  removeInFlight()
  for (const s of SIGNALS) process.off(s, onSignal)
  // With no other listener, re-raise: the process ends by the signal as it would have without us.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
}
