/** `fw init [DIR]`: scaffold an app from templates/init (never overwrites a file). */
import type { Command } from 'commander'
import pc from 'picocolors'
import { constants, existsSync, lstatSync, readFileSync, statSync } from 'node:fs'
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeFailure } from '../../shared/fs-errors.js'
import { realPath, systemFolder } from '../../shared/system-folders.js'
import type { Output } from '../output.js'

const TEMPLATES = fileURLToPath(new URL('../../../templates/init', import.meta.url))
const FW_ROOT = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '')
// npm drops files named .gitignore from packages, so the template is stored without the dot.
const RENAMES: Record<string, string> = { gitignore: '.gitignore' }

export function registerInitCommand(program: Command, output: Output): void {
  program
    .command('init')
    .description(
      'scaffold a new app: routes.ts, server.mjs, package.json, tsconfig.json, .gitignore',
    )
    .argument('[dir]', 'where to create it', '.')
    .action(async (dir: string) => {
      const target = resolve(dir)
      await assertAppFolder(dir, target)
      const names = await readdir(TEMPLATES)
      // A file where the app's folder should be: said before existsSync below takes it for no clash.
      if (isFile(target)) {
        const { FwError } = await import('../../shared/errors.js')
        throw new FwError(
          'FW_INIT_WRITE',
          `Cannot create the app in ${shown(target)}: it is a file, not a folder`,
          {
            hint: 'Pick a folder that does not exist yet or an empty one, e.g. fw init my-app.',
          },
        )
      }
      const clashes = names.map((n) => RENAMES[n] ?? n).filter((n) => taken(join(target, n)))
      if (clashes.length > 0) {
        const { FwError } = await import('../../shared/errors.js')
        throw new FwError(
          'FW_INIT_EXISTS',
          `${relative(process.cwd(), target) || '.'} already has ${clashes.join(', ')}`,
          {
            hint: 'fw init never overwrites files: pick an empty folder, e.g. fw init my-app.',
          },
        )
      }
      try {
        await makeFolder(target)
        // EXCL: a file made since the check above is not overwritten, and a symbolic link is not
        // followed to write wherever it points.
        for (const name of names)
          await copyFile(
            join(TEMPLATES, name),
            join(target, RENAMES[name] ?? name),
            constants.COPYFILE_EXCL,
          )
        const manifest = join(target, 'package.json')
        const text = await readFile(manifest, 'utf8')
        await writeFile(manifest, text.replace('"fw": "*"', `"fw": ${JSON.stringify(fwSpec())}`))
      } catch (error) {
        throw await writeError(error, target)
      }
      const where = relative(process.cwd(), target) || '.'
      output.out(
        `${pc.green('✔ created')} ${names.map((n) => RENAMES[n] ?? n).join(', ')} in ${pc.bold(where)}`,
      )
      output.out(
        `next: ${where === '.' ? '' : `cd ${shellQuote(where)} && `}npm install && npx fw serve --watch`,
      )
    })
}

/**
 * The new app's `fw` dependency. Run from a checkout (or a folder npm links, which the path
 * resolves to): that folder, as the "fw" name on the npm registry is another project. Run from a
 * copy npm installed: what the app holding it asked for, a relative tarball path made absolute;
 * never a file: link into that app's node_modules, which its next install or removal breaks.
 */
function fwSpec(): string {
  if (!FW_ROOT.split(sep).includes('node_modules')) return `file:${FW_ROOT}`
  const app = dirname(dirname(FW_ROOT))
  const { dependencies, devDependencies } = readJson(join(app, 'package.json'))
  const spec = dependencies?.fw ?? devDependencies?.fw
  // Not declared there (a global install, a workspace's hoisted copy): this copy's version.
  if (typeof spec !== 'string') return `^${String(readJson(join(FW_ROOT, 'package.json')).version)}`
  const path = spec.startsWith('file:') ? spec.slice(5) : /^\.{0,2}\//.test(spec) ? spec : undefined
  return path === undefined ? spec : `file:${resolve(app, path)}`
}

interface Manifest {
  version?: unknown
  dependencies?: Record<string, unknown>
  devDependencies?: Record<string, unknown>
}

/** A package.json's content; empty when it is missing or unreadable. */
function readJson(file: string): Manifest {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as Manifest | null) ?? {}
  } catch {
    return {}
  }
}

// What to do about a failure writeFailure() words (as FW_CACHE_WRITE does); ENOENT from mkdir
// where the file system takes no new folders (/proc, /sys).
const IN_THE_WAY = 'Move that file away, or pick another folder, e.g. fw init my-app.'
const DENIED = 'Pick a folder you can write to (e.g. in your home folder), or fix its permissions.'
const FULL = 'Free some space, or pick a folder on another disk.'
const HINTS: Record<string, string> = {
  ENOTDIR: IN_THE_WAY,
  EEXIST: IN_THE_WAY,
  EACCES: DENIED,
  EPERM: DENIED,
  EROFS: 'Pick a folder on a writable disk (e.g. in your home folder).',
  ENOSPC: FULL,
  EDQUOT: FULL,
  ENAMETOOLONG: 'Pick a shorter folder name, e.g. fw init my-app.',
  ELOOP: 'Pick a folder whose path has no looping symbolic links, e.g. fw init my-app.',
}
const NO_FOLDER: [cause: string, hint: string] = [
  'no folder can be made there',
  'Pick a folder on an ordinary disk (e.g. in your home folder).',
]

/**
 * Refuses an empty DIR (an unset shell variable: `fw init "$APP"`), the file-system root, the home
 * folder or a folder above it, and /proc, /sys or /dev: a package.json there makes every project
 * below part of the new app (npm and Node look up the folders for one).
 */
async function assertAppFolder(dir: string, target: string): Promise<void> {
  const what =
    dir.trim() === ''
      ? 'the name is empty'
      : (systemFolder(target) ?? systemFolder(realPath(target)))
  if (what === undefined) return
  const { FwError } = await import('../../shared/errors.js')
  throw new FwError(
    'FW_INIT_UNSAFE_DIR',
    `Refusing to create an app in ${JSON.stringify(dir)}: ${what}`,
    {
      hint: 'Give the app a folder of its own, e.g. fw init my-app.',
    },
  )
}

/** A file-system error of fw init as a user error naming the folder (and the file at fault), or the error unchanged. */
async function writeError(error: unknown, target: string): Promise<unknown> {
  const { code, path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: string }
  const [words, hint] = code === 'ENOENT' ? NO_FOLDER : [writeFailure(error), HINTS[code ?? '']]
  // The path the system named, when it is the folder or inside it (copyFile names the template
  // first): a template missing (ENOENT) is a broken install of fw, not the user's to mend.
  const inside = [dest, path].find(
    (p) => p !== undefined && (p === target || p.startsWith(target + sep)),
  )
  if (words === undefined || hint === undefined || (code === 'ENOENT' && inside === undefined))
    return error
  const { FwError } = await import('../../shared/errors.js')
  let cause = words
  const file = code === 'ENOTDIR' || code === 'EEXIST' ? fileInTheWay(target) : undefined
  if (file !== undefined) cause = `${shown(file)} is a file, not a folder`
  else if (inside !== undefined && inside !== target) cause += ` at ${shown(inside)}`
  return new FwError(
    'FW_INIT_WRITE',
    `Cannot create the app in ${shown(target)}: ${cause} (${code})`,
    { hint, cause: error },
  )
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir reports EROFS as ENOENT, and loops
 * forever where mkdir always fails with ENOENT (under /proc).
 */
async function makeFolder(target: string): Promise<void> {
  const missing: string[] = []
  for (let at = target; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at)
  for (const folder of missing) {
    await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
      // Made meanwhile by someone else: fine.
      if (error.code !== 'EEXIST' || !statSync(folder).isDirectory()) throw error
    })
  }
}

/** The target, or the nearest of its parents, when it is a file. */
function fileInTheWay(target: string): string | undefined {
  for (let at = target; ; at = dirname(at)) {
    if (isFile(at)) return at
    if (dirname(at) === at) return undefined
  }
}

/** Whether something is at `path`: a symbolic link counts, even one pointing nowhere. */
function taken(path: string): boolean {
  try {
    lstatSync(path)
    return true
  } catch {
    // Missing, or not reachable (a parent is a file, no permission): said when it is written.
    return false
  }
}

/** Whether `path` is a file; false when it is missing or cannot be looked at (ENOTDIR, EACCES). */
function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
  } catch {
    return false
  }
}

/** A path relative to the working folder; absolute when it lies outside it. */
function shown(path: string): string {
  const near = relative(process.cwd(), path)
  return near === '' ? '.' : near === '..' || near.startsWith('..' + sep) ? path : near
}

/** A path as it can be pasted into a POSIX shell: quoted when it has spaces or shell symbols. */
export function shellQuote(value: string): string {
  return /^[\w.:@%+=,/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`
}
