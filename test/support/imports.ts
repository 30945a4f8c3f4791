/**
 * Walks a source file's imports (relative ones followed, bare ones collected) for the import
 * boundary tests: the runtime, auth and throttle must reach no compiler, CLI or serve code.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '../..')
export const FORBIDDEN_DIRS = ['src/compiler/', 'src/cli/', 'src/serve/']

/**
 * Files (relative to the repo) and bare specifiers reachable from `entry`. Type-only imports are
 * skipped (they vanish at run time); `dynamic: false` leaves out `import()` edges.
 */
export function walkImports(
  entry: string,
  options: { dynamic?: boolean } = {},
): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(join(ROOT, file), 'utf8')
    const specifiers = [
      ...source.matchAll(/^\s*(?:import|export)\s(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
      ...(options.dynamic === false ? [] : source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)),
    ].map((m) => m[1]!)
    for (const specifier of specifiers) {
      if (!specifier.startsWith('.')) packages.add(specifier)
      else visit(relative(ROOT, resolve(ROOT, dirname(file), specifier.replace(/\.js$/, '.ts'))))
    }
  }
  visit(entry)
  return { files, packages }
}

/** The files of `files` inside a forbidden folder (compiler, CLI, serve). */
export function forbiddenFiles(files: Iterable<string>): string[] {
  return [...files].filter((f) => FORBIDDEN_DIRS.some((dir) => f.startsWith(dir)))
}
