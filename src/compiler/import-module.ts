/**
 * Imports a TypeScript or JavaScript module for build-time use. esbuild bundles it (local files
 * inlined, packages left as imports) and Node imports the bundle from a temporary file with
 * source maps on, so stack frames point into the user's source. Where that file goes, and how it
 * is cleaned up, is in temp-bundle.ts.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, unlinkSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, stop } from 'esbuild'
import { sha256 } from './build.js'
import {
  FILE_SCOPE,
  fileScope,
  packagesExternal,
  scopeInsertion,
  type Insertion,
} from './esbuild-plugins.js'
import { compileError, missingPackage } from './import-errors.js'
import { shiftSourceMap } from './source-map-shift.js'
import { tempFolders, untrack, writeTemporary } from './temp-bundle.js'

// Where load-errors.test.ts has always imported it from.
export interface ImportedModule {
  module: Record<string, unknown>
  /** The bundled code (packages external, inline source map with absolute sources). */
  code: string
  /** sha256 of every local source file the module was built from, by absolute path. */
  inputs: Record<string, string>
}

/** Bundles and imports `file`; a compile error becomes FW_ROUTES_SYNTAX with its location. */
export async function importModule(file: string): Promise<ImportedModule> {
  const name = `.${basename(file)}.fw-${Date.now()}-${randomBytes(4).toString('hex')}.mjs`
  // esbuild writes nothing (write: false); the outfile beside the source only makes the source
  // map's paths relative to the source folder, which sourceRoot then makes absolute.
  const { inputs, code, packages } = await bundle(file, join(dirname(file), name))
  const outfile = await writeTemporary(tempFolders(file, packages), name, code, file)
  try {
    process.setSourceMapsEnabled(true)
    let module: Record<string, unknown>
    try {
      module = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>
    } catch (error) {
      throw missingPackage(error, file, Object.keys(inputs)) ?? error
    }
    return { module, inputs, code }
  } finally {
    // Removed before it is untracked: an error of the app's that nothing catches (a timer of the
    // routes file) ends the process in between, and the exit hook removes only what it tracks. With
    // an `await rm` first, every such run left its bundle behind (in the OS temp folder, or in
    // node_modules/.cache/fw until the day-old sweep).
    try {
      unlinkSync(outfile)
    } catch {
      // Already gone.
    }
    untrack(outfile)
  }
}

async function bundle(
  file: string,
  outfile: string,
): Promise<{ inputs: Record<string, string>; code: string; packages: string[] }> {
  try {
    const result = await restartingBundler(() =>
      build({
        entryPoints: [file],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: 'inline',
        sourcesContent: false,
        metafile: true,
        logLevel: 'silent',
        absWorkingDir: dirname(file),
        write: false,
        // Absolute sources: the same code also runs from the cache folder (routes.mjs).
        sourceRoot: pathToFileURL(dirname(file)).href + '/',
        // The bundle runs from elsewhere (a temporary file, the cache) and holds every local
        // module: paths made from import.meta (new URL('./data.json', import.meta.url),
        // createRequire) or __dirname stay those of the module that wrote them (see fileScope).
        define: {
          'import.meta.url': FILE_SCOPE.url,
          'import.meta.filename': FILE_SCOPE.filename,
          'import.meta.dirname': FILE_SCOPE.dirname,
          __filename: FILE_SCOPE.filename,
          __dirname: FILE_SCOPE.dirname,
        },
        plugins: [packagesExternal, fileScope],
        // A CommonJS module's require() of a package or built-in stays a call at run time, which
        // an ES module only has through createRequire (else "Dynamic require of "x" is not
        // supported").
        banner: {
          js: "import { createRequire as __fwCreateRequire } from 'node:module'\nconst require = __fwCreateRequire(import.meta.url)",
        },
      }),
    )
    const inputs: Record<string, string> = {}
    const insertions = new Map<string, Insertion>()
    for (const input of Object.keys(result.metafile.inputs)) {
      const path = resolve(dirname(file), input)
      if (!existsSync(path)) continue
      const bytes = readFileSync(path)
      inputs[path] = sha256(bytes)
      const inserted = scopeInsertion(path, bytes.toString('utf8'))
      if (inserted !== undefined) insertions.set(path, inserted)
    }
    // The imports left to Node at run time (packages and built-ins).
    const packages = Object.values(result.metafile.outputs).flatMap((output) =>
      output.imports.filter((i) => i.external).map((i) => i.path),
    )
    return { inputs, code: mapShifted(result.outputFiles[0]!.text, insertions), packages }
  } catch (error) {
    throw compileError(error, file)
  }
}

/** `code` with its inline source map no longer counting what fileScope added to its sources. */
function mapShifted(code: string, insertions: ReadonlyMap<string, Insertion>): string {
  const found = INLINE_MAP.exec(code)
  if (found === null || insertions.size === 0) return code
  const map = JSON.parse(Buffer.from(found[1]!, 'base64').toString('utf8')) as Parameters<
    typeof shiftSourceMap
  >[0]
  shiftSourceMap(map, insertions)
  const inline = Buffer.from(JSON.stringify(map)).toString('base64')
  return `${code.slice(0, found.index)}\n//# sourceMappingURL=data:application/json;base64,${inline}\n`
}

const INLINE_MAP = /\n\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\n?$/

/**
 * `code` (a bundle of `file`) as it is written to run from `folder` (a cache generation): its
 * source map's sourceRoot relative to there, not the absolute folder of the machine that built it,
 * so that a cache built in CI and shipped to another path is byte for byte the one a build there
 * would write (`fw serve` finds it up to date) and its stacks name the files where they now lie.
 * @example
 * relocatedBundle(code, '/app/routes.ts', '/app/.fw/cache/generation-1-ab12cd34')
 */
export function relocatedBundle(code: string, file: string, folder: string): string {
  const found = INLINE_MAP.exec(code)
  const root = relative(folder, dirname(file))
  // Another drive (Windows) has no relative path: the absolute one stays.
  if (found === null || isAbsolute(root)) return code
  const map = JSON.parse(Buffer.from(found[1]!, 'base64').toString('utf8')) as Record<
    string,
    unknown
  >
  map.sourceRoot = root === '' ? './' : root.split(sep).join('/') + '/'
  const inline = Buffer.from(JSON.stringify(map)).toString('base64')
  return `${code.slice(0, found.index)}\n//# sourceMappingURL=data:application/json;base64,${inline}\n`
}

/**
 * esbuild's build; when its service process is gone (killed, or crashed: every later build would
 * fail with "The service is no longer running", told as a syntax error in the routes file, and
 * `fw serve --watch` would never reload again), once more with a new one.
 */
async function restartingBundler<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    const gone =
      error instanceof Error &&
      /^The service (?:is no longer running|was stopped)/.test(error.message)
    if (!gone) throw error
    await stop()
    return run()
  }
}

/** Ends esbuild's service process (a long-running server needs it no more after loading). */
export function stopBundler(): Promise<void> {
  return stop()
}
