/**
 * Emits the data modules of one generation: `__routes.json` + `__routes.mjs` (the route table's
 * metadata, parsed lazily) and `__names.mjs` (route name → pre-parsed pattern, for urlFor).
 */
import type { ParamSegment, Segment } from '../../shared/pattern.js'
import { describeRoute } from '../../shared/route-record.js'
import type { AnalyzedRoute } from '../analyze.js'
import { BANNER, lit, propKey } from './code.js'
import { inPlaceTest } from './regex-pool.js'

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
    `import { cacheDamaged } from './__helpers.mjs'`,
    '',
    `const COUNT = ${routes.length}`,
    "const text = readFileSync(new URL('./__routes.json', import.meta.url), 'utf8')",
    '// Written whole, it ends with "]": a file cut short (a full disk, a bad copy) is named now.',
    "if (!text.endsWith('\\n]\\n')) throw cacheDamaged('./__routes.json', new Error('it is cut short'))",
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
    '    try {',
    "      record = JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line)",
    '    } catch (error) {',
    "      throw cacheDamaged('./__routes.json', error)",
    '    }',
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
  const named = routes.filter((r) => r.record.name !== null)
  const rows = named.map((r) => {
    const host = r.hostSegments === null ? null : toParts(r.hostSegments, '.', '')
    return `  ${propKey(r.record.name!)}: [${lit(host)}, ${lit(toParts(r.segments, '/', '/'))}],`
  })
  const checked = named.filter((r) => inPlaceChecks(r).length > 0)
  return [
    BANNER(
      'Route names for urlFor: [host parts | null, path parts]; a part is text or [name, type, regex, optional].',
    ),
    'export const NAMES = Object.freeze({',
    '  __proto__: null,',
    ...rows,
    '})',
    ...(checked.length === 0 ? [] : emitInPlaceChecks(checked)),
    '',
  ].join('\n')
}

/**
 * The path constraints of a route that look around their segment (see inPlaceTest): urlFor tests
 * them on the path it built, as match() does, not on the value alone, where a lookbehind sees
 * nothing (`{x:(?<=/)ab}` refused every value). Their parts in NAMES carry no regex.
 */
export function inPlaceChecks(route: AnalyzedRoute): { index: number; segment: ParamSegment }[] {
  return route.segments.flatMap((segment, i) =>
    segment.kind === 'param' && segment.type === 'regex' && inPlaceTest(segment.regex!) !== null
      ? [{ index: i + 1, segment }]
      : [],
  )
}

function emitInPlaceChecks(routes: readonly AnalyzedRoute[]): string[] {
  const rows = routes.map((r) => {
    const checks = inPlaceChecks(r).map(({ index, segment }) => {
      const test = inPlaceTest(segment.regex!)!
      const sticky = (source: string | null): string =>
        source === null ? 'null' : `new RegExp(${lit(source)}, 'y')`
      const regexes = `${sticky(test.whole)}, ${sticky(test.beforeSlash)}`
      return `[${index}, ${lit(segment.name)}, ${regexes}, ${lit(segment.regex)}]`
    })
    return `  ${propKey(r.record.name!)}: [${checks.join(', ')}],`
  })
  return [
    '// Constraints that look around their segment, tested in place on the path urlFor built:',
    '// [segment index, parameter, sticky regex on the path, on the path through the next "/"',
    '// (null: the first serves everywhere), source], as match() tests them (see inPlaceTest).',
    'export const IN_PLACE = Object.freeze({',
    '  __proto__: null,',
    ...rows,
    '})',
  ]
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
    // An in-place constraint is tested by index.mjs on the whole path (IN_PLACE), not on the value.
    const inPlace = separator === '/' && segment.type === 'regex' && inPlaceTest(segment.regex!)
    const regex = segment.type === 'string' || inPlace ? null : segment.regex
    parts.push([segment.name, segment.type, regex, segment.optional])
  })
  if (segments.length === 0) text = lead
  if (text !== '') parts.push(text)
  return parts
}
