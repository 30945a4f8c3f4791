/**
 * Imports a TypeScript or JavaScript module for build-time use. esbuild bundles it beside the
 * original (so package imports resolve as they would for the app; packages stay external), and
 * Node imports the bundle with source maps on, so stack frames point into the user's source.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, stop, type BuildFailure, type Message } from 'esbuild'
import { displayPath } from '../define/location.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { escapeRegExp } from '../shared/pattern.js'
import { sha256 } from './build.js'

export interface ImportedModule {
  module: Record<string, unknown>
  /** The bundled code (packages external, inline source map with absolute sources). */
  code: string
  /** sha256 of every local source file the module was built from, by absolute path. */
  inputs: Record<string, string>
}

/** Bundles and imports `file`; a compile error becomes FW_ROUTES_SYNTAX with its location. */
export async function importModule(file: string): Promise<ImportedModule> {
  const outfile = join(dirname(file), `.${basename(file)}.fw-${Date.now()}-${randomBytes(4).toString('hex')}.mjs`)
  const { inputs, code } = await bundle(file, outfile)
  try {
    await writeFile(outfile, code)
    process.setSourceMapsEnabled(true)
    let module: Record<string, unknown>
    try {
      module = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>
    } catch (error) {
      throw missingPackage(error, file, Object.keys(inputs)) ?? error
    }
    return { module, inputs, code }
  } finally {
    await rm(outfile, { force: true })
  }
}

async function bundle(file: string, outfile: string): Promise<{ inputs: Record<string, string>; code: string }> {
  try {
    const result = await build({
      entryPoints: [file],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'inline',
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: dirname(file),
      write: false,
      // Absolute sources: the same code also runs from the cache folder (routes.mjs).
      sourceRoot: pathToFileURL(dirname(file)).href + '/',
    })
    const inputs: Record<string, string> = {}
    for (const input of Object.keys(result.metafile.inputs)) {
      const path = resolve(dirname(file), input)
      if (existsSync(path)) inputs[path] = sha256(readFileSync(path))
    }
    return { inputs, code: result.outputFiles[0]!.text }
  } catch (error) {
    const first: Message | undefined = (error as BuildFailure).errors?.[0]
    const where = first?.location
    const location = where
      ? { file: displayPath(resolve(dirname(file), where.file)), line: where.line, column: where.column + 1 }
      : undefined
    throw new FwError('FW_ROUTES_SYNTAX', first ? first.text : String(error), {
      hint: `Fix ${displayPath(file)} so that it compiles.`,
      ...(location ? { location } : {}),
    })
  }
}

/**
 * A package the module imports but Node cannot find, as an error at the import in the user's
 * source (Node names the temporary bundle instead); null for any other error.
 */
function missingPackage(error: unknown, file: string, sources: string[]): FwError | null {
  if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') return null
  const name = /Cannot find package '([^']+)'/.exec((error as Error).message)?.[1]
  if (name === undefined) return null
  // `from 'pkg'`, `import 'pkg'`, `import('pkg')`, `require('pkg')`, also with a subpath.
  const specifier = new RegExp(`(?:from|import|require)\\s*\\(?\\s*(['"])${escapeRegExp(name)}(?:/[^'"]*)?\\1`)
  let location = { file: displayPath(file), line: 1, column: 1 }
  for (const source of [file, ...sources.filter((s) => s !== file)]) {
    const lines = readFileSync(source, 'utf8').split('\n')
    const at = lines.findIndex((line) => specifier.test(line))
    if (at === -1) continue
    location = { file: displayPath(source), line: at + 1, column: lines[at]!.search(/\S/) + 1 }
    break
  }
  return new FwError('FW_ROUTES_LOAD', `${location.file} imports the package '${name}', which is not installed`, {
    hint: `Install it in the app (npm install ${name}) or fix the import.`,
    location,
    cause: error,
  })
}

/**
 * Where `error` was thrown in the user's code: its first stack frame whose file `accept`s
 * (source maps are on for imported modules, so frames point into the user's source).
 * @example
 * locateInStack(error, (path) => path === configFile)
 */
export function locateInStack(error: unknown, accept: (path: string) => boolean): SourceLocation | undefined {
  const stack = error instanceof Error ? (error.stack ?? '') : ''
  for (const line of stack.split('\n')) {
    const m = /\(?(?:file:\/\/)?(\/[^\s()]+?):(\d+):(\d+)\)?\s*$/.exec(line.trim())
    if (m && accept(m[1]!)) return { file: displayPath(m[1]!), line: Number(m[2]), column: Number(m[3]) }
  }
  return undefined
}

/** Ends esbuild's service process (a long-running server needs it no more after loading). */
export function stopBundler(): Promise<void> {
  return stop()
}
