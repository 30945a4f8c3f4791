/**
 * Audit 8: router.d.mts at scale. Regression: each route's parameters were a type literal of their
 * own, so to tsc RouteParams[RouteName], the contextual type of every params object given to
 * urlFor while the route name is still being inferred, was a union of one member per route, and
 * each call cost time in proportion to the route table (500 calls over the 10,000 benchmark
 * routes: 6 s of checking instead of 1.5 s). Routes of one shape now share one type. Checked with
 * the compiler API (no timings: the union's size) on a cache the real CLI built from 2,000 routes,
 * under the strictest options a user may set, with names and parameters hard to write in TypeScript
 * as the last of their shape, so that others refer to them.
 */
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, runFw, writeFiles } from '../support/project.js'

const COUNT = 2000
// Three shapes of parameters besides none, each last used by a route with a hard name.
const HARD = `  r.get('/h/{default}/{class}', h, '__proto__')
  r.get('/q/{id:int}/{slug?}', h, 'quote"s\\\\back-slash.ünï')
  r.get('/c/{valueOf}/{constructor?}', h, 'constructor')
`
const shape = (i: number): string =>
  [
    `/s${i}`,
    `/d${i}/{default}/{class}`,
    `/q${i}/{id:int}/{slug?}`,
    `/c${i}/{valueOf}/{constructor?}`,
  ][i % 4]!
const ROUTES = [
  'const h = () => null',
  'export default (r) => {',
  ...Array.from({ length: COUNT }, (_, i) => `  r.get('${shape(i)}', h, 'r${i}')`),
  HARD,
  '}',
].join('\n')

const PASS = `import { urlFor, type RouteName, type RouteParams } from './cache/router.mjs'
export type AllParams = RouteParams[RouteName]
export const urls: string[] = [
  urlFor('r0'),
  urlFor('r1', { default: 'a', class: 1 }),
  urlFor('r2', { id: 1 }),
  urlFor('r2', { id: 1, slug: undefined }, { tab: 'x' }, true),
  urlFor('r3', { valueOf: 'v' }),
  urlFor('__proto__', { default: 'a', class: 'b' }),
  urlFor('quote"s\\\\back-slash.ünï', { id: 2, slug: null }),
  urlFor('constructor', { valueOf: 1, constructor: 'c' }),
]
`
const FAIL_LINES = {
  unknownName: `urlFor('r${COUNT}')`,
  missingParam: `urlFor('r2', {})`,
  mistypedParam: `urlFor('r${COUNT - 2}', { id: '1' })`,
  unknownParam: `urlFor('r5', { default: 'a', class: 'b', other: 1 })`,
}
const FAIL = [`import { urlFor } from './cache/router.mjs'`, '', ...Object.values(FAIL_LINES)].join(
  '\n',
)

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  noEmit: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  types: [],
}

beforeAll(assertBuilt)
afterAll(cleanupProjects)

describe('router.d.mts with 2,000 routes', () => {
  let program: ts.Program
  let dir: string
  const messages = (file: string): Map<number, string> => {
    const found = new Map<number, string>()
    for (const d of ts.getPreEmitDiagnostics(program, program.getSourceFile(join(dir, file)))) {
      const line = d.file!.getLineAndCharacterOfPosition(d.start!).line + 1
      found.set(line, ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    }
    return found
  }

  beforeAll(async () => {
    dir = makeProject({ 'routes.mjs': ROUTES, 'package.json': '{ "type": "module" }' })
    const built = await runFw(
      ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
      { cwd: dir },
    )
    expect(built.code, built.stderr).toBe(0)
    writeFiles(dir, { 'pass.ts': PASS, 'fail.ts': FAIL })
    // One program for every check: loading TypeScript's libs takes seconds.
    program = ts.createProgram([join(dir, 'pass.ts'), join(dir, 'fail.ts')], OPTIONS)
  }, 60_000)

  it('type-checks every call, hard names and parameters included, the declaration too', () => {
    const declaration = program.getSourceFile(join(dir, 'cache', 'router.d.mts'))!
    expect(ts.getPreEmitDiagnostics(program, declaration).map((d) => d.messageText)).toEqual([])
    expect([...messages('pass.ts').values()]).toEqual([])
  })

  it('gives routes of one shape one type: the union of all parameters has one member a shape', () => {
    const file = program.getSourceFile(join(dir, 'pass.ts'))!
    const alias = file.statements.find(ts.isTypeAliasDeclaration)!
    const all = program.getTypeChecker().getTypeAtLocation(alias.name)
    // No parameters, and the three shapes; it was one member per route with parameters (1,504 here).
    expect(all.isUnion() ? all.types.length : 1).toBe(4)
  })

  it('still says why a call is refused, in a message of one route, not of the table', () => {
    const found = messages('fail.ts')
    const line = (key: keyof typeof FAIL_LINES): string =>
      found.get(Object.keys(FAIL_LINES).indexOf(key) + 3) ?? ''
    expect(found.size).toBe(Object.keys(FAIL_LINES).length)
    expect(line('unknownName')).toContain(
      `'"r${COUNT}"' is not assignable to parameter of type 'keyof RouteParams'`,
    )
    expect(line('missingParam')).toContain(
      `'{ id: number; slug?: string | number | null | undefined; }'`,
    )
    expect(line('mistypedParam')).toContain(`Type 'string' is not assignable to type 'number'`)
    expect(line('unknownParam')).toContain(`'other' does not exist`)
    for (const message of found.values()) expect(message.length).toBeLessThan(400)
  })
})
