/**
 * Takes back, in a bundle's source map, the text fileScope (esbuild-plugins.ts) added at the start
 * of a module's first line: esbuild maps the code to the source as the plugin handed it over, so
 * on that line every position was off by the added text's length (a minified one-line routes file
 * that uses import.meta had each route and error told some 200 columns to the right).
 */
import { fileURLToPath } from 'node:url'
import { decode, encode } from '@jridgewell/sourcemap-codec'
import type { Insertion } from './esbuild-plugins.js'

/**
 * `map` (a source map v3 object) with original columns on each insertion's line moved back by its
 * length (positions inside the added text go to column 0). `insertions` is keyed by absolute path.
 * @example
 * shiftSourceMap(map, new Map([['/app/routes.ts', { line: 0, length: 120 }]]))
 */
export function shiftSourceMap(
  map: { sources?: string[]; sourceRoot?: string; mappings?: string },
  insertions: ReadonlyMap<string, Insertion>,
): void {
  const bySource = (map.sources ?? []).map((source) => insertions.get(sourcePath(map, source)))
  if (!bySource.some(Boolean) || typeof map.mappings !== 'string') return
  const lines = decode(map.mappings)
  for (const segments of lines) {
    for (const segment of segments) {
      if (segment.length < 4) continue
      const inserted = bySource[segment[1]!]
      if (inserted !== undefined && segment[2] === inserted.line)
        segment[3] = Math.max(0, segment[3]! - inserted.length)
    }
  }
  map.mappings = encode(lines)
}

function sourcePath(map: { sourceRoot?: string }, source: string): string {
  try {
    return fileURLToPath(new URL(source, map.sourceRoot || undefined))
  } catch {
    return source
  }
}
