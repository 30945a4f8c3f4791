/**
 * Imports a TypeScript or JavaScript module for build-time use. esbuild bundles it (local files
 * inlined, packages left as imports) and Node imports the bundle from a temporary file with
 * source maps on, so stack frames point into the user's source. Where that file goes, and how it
 * is cleaned up, is in temp-bundle.ts.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build, stop, type BuildFailure, type Loader, type Message, type Plugin } from 'esbuild'
import { displayPath } from '../define/location.js'
import { FwError, type SourceLocation } from '../shared/errors.js'
import { escapeRegExp } from '../shared/pattern.js'
import { sha256 } from './build.js'
import { tempFolders, untrack, writeTemporary } from './temp-bundle.js'

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
    untrack(outfile)
    await rm(outfile, { force: true }).catch(() => {})
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
    for (const input of Object.keys(result.metafile.inputs)) {
      const path = resolve(dirname(file), input)
      if (existsSync(path)) inputs[path] = sha256(readFileSync(path))
    }
    // The imports left to Node at run time (packages and built-ins).
    const packages = Object.values(result.metafile.outputs).flatMap((output) =>
      output.imports.filter((i) => i.external).map((i) => i.path),
    )
    return { inputs, code: result.outputFiles[0]!.text, packages }
  } catch (error) {
    throw compileError(error, file)
  }
}

// A specifier that is no relative or absolute path: a package, or a built-in (which esbuild
// resolves as external for platform 'node'). esbuild's filters are Go regexes: no lookahead.
// This package's own folder (dist/compiler/ → the root).
const FW_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/[\\/]$/, '')

const PACKAGE_SPECIFIER = /^[^./]/
const TYPESCRIPT_FILE = /\.(?:[cm]?ts|tsx)$/
const WINDOWS_PATH = /^[a-z]:[\\/]/i

/**
 * Packages stay imports, which Node resolves at run time (esbuild's `packages: 'external'`),
 * except one whose entry is TypeScript: a package of the app's own workspace (npm, pnpm or yarn
 * workspaces link it into node_modules with `"main": "src/index.ts"`), which Node 20 cannot
 * import ("Unknown file extension .ts") and Node 22+ refuses to strip under node_modules. That
 * one is bundled, as the app's own files are.
 */
const packagesExternal: Plugin = {
  name: 'fw-packages-external',
  setup(build) {
    build.onResolve({ filter: PACKAGE_SPECIFIER }, async (args) => {
      if (args.pluginData === RESOLVING || WINDOWS_PATH.test(args.path)) return undefined
      const found = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: RESOLVING,
      })
      // A package esbuild cannot resolve (an optional one not installed) is Node's to resolve, or
      // to fail on, at run time, as before.
      const bundled =
        found.errors.length === 0 && !found.external && TYPESCRIPT_FILE.test(found.path)
      return bundled ? { path: found.path } : { path: args.path, external: true }
    })
  },
}
const RESOLVING = Symbol('fw-resolving')

// Each local module's own location, declared in it under these names (esbuild renames them apart
// in the bundle, and define points import.meta.url and __dirname at them).
const FILE_SCOPE = { url: '__fw_url', filename: '__fw_filename', dirname: '__fw_dirname' }

const fileScope: Plugin = {
  name: 'fw-file-scope',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async ({ path }) => {
      // One it cannot read is left to esbuild, whose error says so (FW_ROUTES_READ).
      const source = await readFile(path, 'utf8').catch(() => null)
      if (source === null) return undefined
      // Read once here: the source goes back to esbuild as it is when nothing is added.
      const { at, text } = scopeDeclaration(path, source)
      return { contents: source.slice(0, at) + text + source.slice(at), loader: loaderOf(path) }
    })
  },
}

/**
 * What fileScope adds to a module, and where: nothing unless it uses import.meta or __dirname;
 * else one statement at the start of its first line (after a #! line, which must come first), so
 * that every other line keeps its number and columns.
 */
function scopeDeclaration(path: string, source: string): { at: number; text: string } {
  if (path.split(/[\\/]/).includes('node_modules')) return { at: 0, text: '' }
  if (!/\bimport\s*\.\s*meta\b|\b__(?:dir|file)name\b/.test(source)) return { at: 0, text: '' }
  const text =
    `var ${FILE_SCOPE.url} = ${JSON.stringify(pathToFileURL(path).href)}, ` +
    `${FILE_SCOPE.filename} = ${JSON.stringify(path)}, ` +
    `${FILE_SCOPE.dirname} = ${JSON.stringify(dirname(path))};`
  return { at: source.startsWith('#!') ? source.indexOf('\n') + 1 : 0, text }
}

function loaderOf(path: string): Loader {
  if (/\.[cm]?ts$/.test(path)) return 'ts'
  if (path.endsWith('.tsx')) return 'tsx'
  return path.endsWith('.jsx') ? 'jsx' : 'js'
}

/** A compile error's column as the user's file has it (fileScope may have added to its line). */
function userColumn(path: string, line: number, column: number): number {
  try {
    const source = readFileSync(path, 'utf8')
    const { at, text } = scopeDeclaration(path, source)
    const onLine = source.slice(0, at).split('\n').length
    return line === onLine && column >= text.length ? column - text.length : column
  } catch {
    return column
  }
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

/**
 * A failed esbuild build as a user error: a file it could not read as FW_ROUTES_READ, anything
 * else as FW_ROUTES_SYNTAX; the hint names the file that has the error (maybe an imported one).
 */
export function compileError(error: unknown, file: string): FwError {
  const first: Message | undefined = (error as BuildFailure).errors?.[0]
  const where = first?.location
  const source = where ? resolve(dirname(file), where.file) : ''
  const location = where
    ? {
        file: displayPath(source),
        line: where.line,
        column: userColumn(source, where.line, where.column) + 1,
      }
    : undefined
  const unreadable = first ? /^Cannot read file "(.+)": (.+)$/.exec(first.text) : null
  if (unreadable) {
    const path = displayPath(resolve(dirname(file), unreadable[1]!))
    const denied = /permission denied|operation not permitted/i.test(unreadable[2]!)
    return new FwError('FW_ROUTES_READ', `Cannot read ${path}: ${unreadable[2]}`, {
      hint: denied
        ? `Give the user running fw read access to ${path} (e.g. chmod a+r ${path}).`
        : `Check that ${path} is a readable file.`,
      ...(location ? { location } : {}),
      cause: error,
    })
  }
  const culprit = location?.file ?? displayPath(file)
  const importedBy = culprit === displayPath(file) ? '' : ` (imported by ${displayPath(file)})`
  return new FwError('FW_ROUTES_SYNTAX', first ? first.text : String(error), {
    hint: `Fix ${culprit}${importedBy} so that it compiles.`,
    ...(location ? { location } : {}),
    ...(first ? {} : { cause: error }),
  })
}

/**
 * A package (or a file or subpath of one) the module imports but Node cannot find, as an error at
 * the import in the user's source (Node names the temporary bundle instead); null for any other
 * error.
 */
function missingPackage(error: unknown, file: string, sources: string[]): FwError | null {
  const missing = missingImport(error)
  if (missing === null) return null
  const { name, specifier } = missing
  // `from 'pkg'`, `import 'pkg'`, `import('pkg')`, `require('pkg')`, also with a subpath.
  const written = new RegExp(
    `(?:from|import|require)\\s*\\(?\\s*(['"])${escapeRegExp(name)}(?:/[^'"]*)?\\1`,
  )
  let location = { file: displayPath(file), line: 1, column: 1 }
  for (const source of [file, ...sources.filter((s) => s !== file)]) {
    const lines = readFileSync(source, 'utf8').split('\n')
    const at = lines.findIndex((line) => written.test(line))
    if (at === -1) continue
    location = { file: displayPath(source), line: at + 1, column: lines[at]!.search(/\S/) + 1 }
    break
  }
  const listedIn = manifestListing(file, name)
  const [message, hint] =
    specifier === name
      ? [
          `${location.file} imports the package '${name}', which is not installed`,
          listedIn === undefined
            ? name === 'fw'
              ? // The 'fw' on the npm registry is another project (see fw init's fwSpec()).
                `Install fw from its folder or tarball (npm install ${FW_ROOT}), not from the registry, whose 'fw' is another project; fw init sets this up.`
              : `Install it in the app (npm install ${name}) or fix the import.`
            : `${listedIn} lists it: run \`npm install\` (\`npm install ${name}\` would replace that entry with the registry's package).`,
        ]
      : [
          `${location.file} imports '${specifier}', which the installed package '${name}' does not provide`,
          `Check the path after '${name}' (its package.json "exports" lists what it provides), or the installed version (npm ls ${name}).`,
        ]
  return new FwError('FW_ROUTES_LOAD', message, { hint, location, cause: error })
}

/**
 * The app's package.json (the nearest above `file`, as shown) when its dependencies list `name`:
 * then installing is `npm install`, and `npm install name` would swap the entry the app chose (a
 * `file:` path, a git URL, a pinned version; `fw init` writes a `file:` one for fw) for the
 * registry's latest.
 */
function manifestListing(file: string, name: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        const fields = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>
        const listed = DEPENDENCY_FIELDS.some((field) =>
          Object.hasOwn((fields[field] ?? {}) as object, name),
        )
        return listed ? displayPath(manifest) : undefined
      } catch {
        return undefined
      }
    }
    if (dirname(dir) === dir) return undefined
  }
}

const DEPENDENCY_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
]

/**
 * The package an ERR_MODULE_NOT_FOUND or ERR_PACKAGE_PATH_NOT_EXPORTED is about, and what the
 * import asked of it (`pkg`, or `pkg/sub/file.js`); null for another error or an unknown shape.
 * @example
 * // Cannot find module '/app/node_modules/pkg/nope.js' imported from ...
 * missingImport(error) // { name: 'pkg', specifier: 'pkg/nope.js' }
 */
function missingImport(error: unknown): { name: string; specifier: string } | null {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : ''
  if (code === 'ERR_MODULE_NOT_FOUND') {
    const name = /Cannot find package '([^']+)'/.exec(message)?.[1]
    if (name !== undefined) return { name, specifier: name }
    // Only an import of the routes' own code (the bundle), not one inside a broken package.
    const path = /Cannot find module '([^']+)' imported from .*\.fw-\d+-[0-9a-f]+\.mjs/.exec(
      message,
    )?.[1]
    const inside = path?.split(/[\\/]node_modules[\\/]/).at(-1)
    if (path === undefined || inside === undefined || inside === path) return null
    return packageAndPath(inside.replaceAll('\\', '/'))
  }
  if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    const m = /subpath '\.\/([^']*)' is not defined by "exports" in (.+)[\\/]package\.json/.exec(
      message,
    )
    const inside = m?.[2]?.split(/[\\/]node_modules[\\/]/).at(-1)
    if (!m || inside === undefined || inside === m[2]) return null
    return { name: inside.replaceAll('\\', '/'), specifier: `${inside}/${m[1]}` }
  }
  return null
}

/** `@scope/pkg/a.js` → { name: '@scope/pkg', specifier: '@scope/pkg/a.js' }. */
function packageAndPath(specifier: string): { name: string; specifier: string } {
  const parts = specifier.split('/')
  const name = parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
  return { name, specifier }
}

/** Ends esbuild's service process (a long-running server needs it no more after loading). */
export function stopBundler(): Promise<void> {
  return stop()
}
