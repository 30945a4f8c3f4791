/**
 * Loads a routes file for the compiler: imports it (see import-module.ts) and runs its default
 * export against a registrar that records where each route was registered.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, extname, join, relative, resolve } from 'node:path'
import { assertSynchronous, Registrar } from '../define/registrar.js'
import { displayPath } from '../define/location.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { thrownMessage } from '../shared/thrown.js'
import { inAppCode, locateInStack } from '../define/location.js'
import { importModule } from './import-module.js'

export interface LoadedRoutes {
  registrar: Registrar
  /** The routes file's default export, to boot a kernel with. */
  register: (r: Registrar) => void
  /** The routes file bundled as one ES module (packages left as imports). */
  code: string
  /** sha256 of every local source file the routes file was built from, by absolute path. */
  inputs: Record<string, string>
  file: string
}

/** The names esbuild reads as code; anything else (`.txt`, `.css`) it loads as data. */
const CODE_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/i

/**
 * Bundles, imports and runs a routes file.
 * @example
 * const { registrar } = await loadRoutesFile('routes.ts')
 */
export async function loadRoutesFile(routesFile: string): Promise<LoadedRoutes> {
  const file = resolve(routesFile)
  assertRoutesFile(file)
  let imported
  try {
    imported = await refusingExit(file, () => importModule(file))
  } catch (error) {
    if (error instanceof FwError) throw error
    throw userError(file, error, 'loaded')
  }
  const register = registerOf(file, imported.module.default)
  return {
    registrar: await refusingExit(file, () => runRegister(file, register)),
    register,
    inputs: imported.inputs,
    code: imported.code,
    file,
  }
}

/** A routes file that is missing, a folder, a pipe or a device is a user error, before any read. */
function assertRoutesFile(file: string): void {
  if (!existsSync(file)) {
    const above = sameNameAbove(file)
    throw new FwError('FW_ROUTES_NOT_FOUND', `Routes file ${displayPath(file)} does not exist`, {
      hint:
        above === undefined
          ? 'Pass --routes FILE, or create routes.ts (fw init scaffolds one).'
          : `There is ${displayPath(above)}: run fw from ${displayPath(dirname(above))}, the project folder, or pass --routes ${displayPath(above)}.`,
    })
  }
  const stats = statSync(file)
  if (stats.isDirectory()) {
    throw new FwError(
      'FW_ROUTES_NOT_FOUND',
      `${displayPath(file) || '.'} is a folder, not a routes file`,
      {
        hint: 'Pass --routes FILE with the file itself, e.g. --routes routes.ts.',
      },
    )
  }
  // A named pipe or a device would be read for ever (the build hung on a FIFO).
  if (!stats.isFile()) {
    throw new FwError('FW_ROUTES_NOT_FOUND', `${displayPath(file)} is not a regular file`, {
      hint: 'Pass --routes FILE with a routes file, e.g. --routes routes.ts.',
    })
  }
}

/**
 * The nearest file of the same name in a folder above `file`'s, up to the project's root: fw run
 * from a subfolder of the project, where suggesting to create (or `fw init`) a routes file would
 * start a second project.
 */
function sameNameAbove(file: string): string | undefined {
  // Not past the project's root (its package.json): a routes file above is another project's.
  for (let dir = dirname(file); !existsSync(join(dir, 'package.json')) && dirname(dir) !== dir;) {
    dir = dirname(dir)
    const candidate = join(dir, basename(file))
    if (isRegularFile(candidate)) return candidate
  }
  return undefined
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The routes function the file exports by default; else why there is none. */
function registerOf(file: string, exported: unknown): (r: Registrar) => void {
  if (typeof exported === 'function') return exported as (r: Registrar) => void
  const location = { file: displayPath(file), line: 1, column: 1 }
  // esbuild reads a .txt or .css file as text or CSS: its default export is no function.
  if (!CODE_FILE.test(file) && extname(file) !== '') {
    throw new FwError(
      'FW_ROUTES_NO_DEFAULT',
      `${displayPath(file)} is no JavaScript or TypeScript file, so it exports no routes function`,
      {
        hint: 'Give the routes file a .ts, .mts, .cts, .js, .mjs or .cjs name, e.g. routes.ts.',
        location,
      },
    )
  }
  throw new FwError('FW_ROUTES_NO_DEFAULT', `${displayPath(file)} has no default export function`, {
    hint: 'Write `export default (r) => { r.get("/", handler) }` (or use defineRoutes).',
    location,
  })
}

function runRegister(file: string, register: (r: Registrar) => void): Registrar {
  const registrar = new Registrar({ captureLocations: true })
  let returned: unknown
  try {
    returned = register(registrar)
  } catch (error) {
    if (error instanceof FwError) throw error
    throw userError(file, error, 'run')
  }
  assertSynchronous(returned, `The default export of ${displayPath(file)}`, () =>
    defaultExportAt(file),
  )
  registrar.seal()
  return registrar
}

/**
 * Runs `load` with process.exit() refused to the app's code: a routes file (or a module it
 * imports) that ended the process made `fw route:cache build` exit 0 without a word and without a
 * cache, a CI step that passed. The call throws a user error where it was made instead. A call
 * with none of the app's code on the stack (fw's own, on a signal) still exits.
 */
async function refusingExit<T>(file: string, load: () => Promise<T> | T): Promise<T> {
  const exit = process.exit
  process.exit = ((code?: number | string | null) => {
    const location = locateInStack(new Error(), inAppCode)
    if (location === undefined) return exit(code)
    throw new FwError(
      'FW_ROUTES_LOAD',
      `${displayPath(file)} called process.exit(${code ?? ''}) while fw loaded it`,
      {
        hint: 'A routes file registers routes and returns: remove the process.exit() call.',
        location,
      },
    )
  }) as typeof process.exit
  try {
    return await load()
  } finally {
    process.exit = exit
  }
}

/** The line of `export default` (or `export { x as default }`) in the routes file, else line 1. */
function defaultExportAt(file: string): SourceLocation {
  let lines: string[] = []
  try {
    lines = readFileSync(file, 'utf8').split('\n')
  } catch {
    // Located at line 1.
  }
  const at = lines.findIndex((line) => /^\s*export\s+(default\b|\{[^}]*\bdefault\b)/.test(line))
  return {
    file: displayPath(file),
    line: at + 1 || 1,
    column: at === -1 ? 1 : lines[at]!.search(/\S/) + 1,
  }
}

/**
 * An error the user's own code threw, located by its first frame inside the routes' folder; one
 * without a stack (`throw 'text'`) at the default export when it ran, else at the file's top.
 */
function userError(file: string, error: unknown, phase: 'loaded' | 'run'): FwError {
  const message = thrownMessage(error)
  const location =
    locateInStack(
      error,
      (path) => !path.includes('node_modules') && !relative(dirname(file), path).startsWith('..'),
    ) ?? (phase === 'run' ? defaultExportAt(file) : { file: displayPath(file), line: 1, column: 1 })
  return new FwError('FW_ROUTES_LOAD', `The routes file threw while it was ${phase}: ${message}`, {
    hint: 'Fix the error in your routes file (run with --debug for the stack).',
    cause: error,
    location,
  })
}
