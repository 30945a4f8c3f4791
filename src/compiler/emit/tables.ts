/**
 * Emits the data modules of one generation: `__routes.json` + `__routes.mjs` (the route table's
 * metadata, parsed lazily) and `__names.mjs` (route name → pre-parsed pattern, for urlFor).
 */
import type { Segment } from '../../shared/pattern.js'
import { describeRoute } from '../../shared/route-record.js'
import type { AnalyzedRoute } from '../analyze.js'
import { BANNER, lit, propKey } from './code.js'

/**
 * `__routes.json` (one route per line) and `__routes.mjs`, which reads it. A record is parsed the
 * first time something asks for it (`route(id)`: the index's static hits at import, a shard's
 * routes when it loads), so importing the router does not parse thousands of records it may never
 * return. `ROUTES`, the whole table as a frozen array, is filled on first use.
 */
export function emitRoutesFiles(routes: readonly AnalyzedRoute[]): {
  json: string
  module: string
} {
  const rows = routes.map(({ record }) =>
    JSON.stringify({ id: record.id, ...describeRoute(record) }),
  )
  const module = [
    BANNER(
      'The route table (metadata of every route, indexed by route id), read from __routes.json.',
    ),
    `import { readFileSync } from 'node:fs'`,
    '',
    `const COUNT = ${routes.length}`,
    "const text = readFileSync(new URL('./__routes.json', import.meta.url), 'utf8')",
    '// Line 0 is "[", line id + 1 holds route id (with a trailing comma but on the last).',
    'let lines = null',
    'const records = new Array(COUNT).fill(null)',
    '',
    '/** The frozen metadata of route `id`: parsed on first use, the same object every time. */',
    'export function route(id) {',
    '  let record = records[id]',
    '  if (record === null) {',
    "    lines ??= text.split('\\n')",
    '    const line = lines[id + 1]',
    "    record = JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line)",
    '    Object.freeze(record.middleware)',
    '    records[id] = record = Object.freeze(record)',
    '  }',
    '  return record',
    '}',
    '',
    '// The whole table: a frozen array of the same records, filled when first touched.',
    'const table = []',
    'function fill() {',
    '  if (Object.isFrozen(table)) return',
    '  for (let id = 0; id < COUNT; id++) table.push(route(id))',
    '  Object.freeze(table)',
    '}',
    'const handler = {}',
    "for (const trap of ['get', 'set', 'has', 'deleteProperty', 'defineProperty', 'getOwnPropertyDescriptor', 'ownKeys', 'getPrototypeOf', 'setPrototypeOf', 'isExtensible', 'preventExtensions']) {",
    '  handler[trap] = (target, ...rest) => (fill(), Reflect[trap](target, ...rest))',
    '}',
    'export const ROUTES = new Proxy(table, handler)',
    '',
  ].join('\n')
  return { json: `[\n${rows.join(',\n')}\n]\n`, module }
}

/** `__names.mjs`: for each named route, its host and path as literal parts and parameters. */
export function emitNamesModule(routes: readonly AnalyzedRoute[]): string {
  const rows = routes
    .filter((r) => r.record.name !== null)
    .map((r) => {
      const host = r.hostSegments === null ? null : toParts(r.hostSegments, '.', '')
      return `  ${propKey(r.record.name!)}: [${lit(host)}, ${lit(toParts(r.segments, '/', '/'))}],`
    })
  return [
    BANNER(
      'Route names for urlFor: [host parts | null, path parts]; a part is text or [name, type, regex, optional].',
    ),
    'export const NAMES = Object.freeze({',
    '  __proto__: null,',
    ...rows,
    '})',
    '',
  ].join('\n')
}

function toParts(segments: readonly Segment[], separator: string, lead: string): unknown[] {
  const parts: unknown[] = []
  let text = ''
  segments.forEach((segment, i) => {
    text += i === 0 ? lead : separator
    if (segment.kind === 'static') {
      text += segment.value
      return
    }
    parts.push(text)
    text = ''
    const regex = segment.type === 'string' ? null : segment.regex
    parts.push([segment.name, segment.type, regex, segment.optional])
  })
  if (segments.length === 0) text = lead
  if (text !== '') parts.push(text)
  return parts
}
