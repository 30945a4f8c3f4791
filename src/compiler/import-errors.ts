/**
 * Failures of loading a routes file (import-module.ts) told as the user's errors, at the place in
 * the user's source they come from: a compile error (FW_ROUTES_SYNTAX, FW_ROUTES_READ) and an
 * import Node cannot resolve (FW_ROUTES_LOAD).
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BuildFailure, Message } from 'esbuild'
import { displayPath } from '../define/location.js'
import { FwError } from '../shared/errors.js'
import { escapeRegExp } from '../shared/pattern.js'
import { thrownMessage } from '../shared/thrown.js'
import { scopeInsertion } from './esbuild-plugins.js'

// This package's own folder (dist/compiler/ → the root).
const FW_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/[\\/]$/, '')

/**
 * A compile error's 0-based column as the user's file has it: esbuild counts UTF-8 bytes of the
 * line as fileScope handed it over (`lineText`), editors count characters (UTF-16 units, as V8's
 * stack positions do), and fileScope may have added to the line.
 */
function userColumn(path: string, line: number, byteColumn: number, lineText?: string): number {
  const column =
    typeof lineText === 'string'
      ? Buffer.from(lineText).subarray(0, byteColumn).toString('utf8').length
      : byteColumn
  try {
    const inserted = scopeInsertion(path, readFileSync(path, 'utf8'))
    return inserted !== undefined && line === inserted.line + 1 && column >= inserted.length
      ? column - inserted.length
      : column
  } catch {
    return column
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
        column: userColumn(source, where.line, where.column, where.lineText) + 1,
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
export function missingPackage(error: unknown, file: string, sources: string[]): FwError | null {
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
  if (!(error instanceof Error)) return null
  const code = (error as { code?: string }).code
  const message = thrownMessage(error)
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
