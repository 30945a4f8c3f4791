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
import { FwError } from '../shared/errors.js'
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
    const module = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>
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

/** Ends esbuild's service process (a long-running server needs it no more after loading). */
export function stopBundler(): Promise<void> {
  return stop()
}
