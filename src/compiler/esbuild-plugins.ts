/**
 * The esbuild plugins that bundle a routes file for import-module.ts: which packages stay imports
 * for Node to resolve at run time (packagesExternal), and each local module's own location kept for
 * import.meta and __dirname once all of them share one bundle (fileScope).
 */
import { readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Loader, Plugin } from 'esbuild'

// A specifier that is no relative or absolute path: a package, or a built-in (which esbuild
// resolves as external for platform 'node'). esbuild's filters are Go regexes: no lookahead.
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
export const packagesExternal: Plugin = {
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
export const FILE_SCOPE = { url: '__fw_url', filename: '__fw_filename', dirname: '__fw_dirname' }

export const fileScope: Plugin = {
  name: 'fw-file-scope',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async ({ path }) => {
      // One it cannot read is left to esbuild, whose error says so (FW_ROUTES_READ).
      const read = await readFile(path, 'utf8').catch(() => null)
      if (read === null) return undefined
      // Without its byte order mark, which editors do not show: it counted as a column on line 1.
      const source = withoutByteOrderMark(read)
      // Read once here: the source goes back to esbuild as it is when nothing is added.
      const { at, text } = scopeDeclaration(path, source)
      return { contents: source.slice(0, at) + text + source.slice(at), loader: loaderOf(path) }
    })
  },
}

/** `source` without a leading UTF-8 byte order mark. */
function withoutByteOrderMark(source: string): string {
  return source.charCodeAt(0) === 0xfeff ? source.slice(1) : source
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

/** Text fileScope adds to a source: `length` UTF-16 units at the start of 0-based `line`. */
export interface Insertion {
  line: number
  length: number
}

/**
 * Where fileScope's declaration goes in a module read from disk (`raw`, a BOM and all), for
 * positions to be told as the user's file has them; undefined when it adds none.
 * @example
 * scopeInsertion('/app/routes.ts', 'console.log(import.meta.url)') // { line: 0, length: 118 }
 */
export function scopeInsertion(path: string, raw: string): Insertion | undefined {
  const source = withoutByteOrderMark(raw)
  const { at, text } = scopeDeclaration(path, source)
  if (text === '') return undefined
  return { line: source.slice(0, at).split('\n').length - 1, length: text.length }
}

function loaderOf(path: string): Loader {
  if (/\.[cm]?ts$/.test(path)) return 'ts'
  if (path.endsWith('.tsx')) return 'tsx'
  return path.endsWith('.jsx') ? 'jsx' : 'js'
}
