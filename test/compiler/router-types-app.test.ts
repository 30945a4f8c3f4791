/**
 * `router.d.mts` as a strict TypeScript server meets it: a `server.ts` importing every export of
 * the cache's `router.mjs`, under each moduleResolution an app may use (nodenext, bundler, node10
 * all pick the declaration beside it), with fw's own types from `fw/runtime` beside them.
 *
 * Regressions (a types audit): a route name beyond ASCII was written as it is, the one character
 * outside ASCII in what a build writes (every other file escapes it); and the declaration's
 * MatchResult and RouteInfo, written out so that it needs no `fw` to resolve from the cache
 * folder, had nothing keeping them the shape of the ones `fw/runtime` exports.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENERATED_MARK } from '../../src/shared/cache-format.js'
import {
  assertBuilt,
  cleanupProjects,
  makeProject,
  REPO_ROOT,
  runFw,
  writeFiles,
} from '../support/project.js'

const ROUTES = `export default (r) => {
  r.get('/', () => 'home', 'home')
  r.get('/users/{id:int}', () => 'user', 'users.show')
  r.get('/menu/{code:[A-Z]{3}}', () => 'menu', 'café-menu.ünï')
  r.get('/emoji', () => 'smile', 'smile.\u{1F600}')
  r.get('/unnamed/{id}', () => 'unnamed')
}
`

const SERVER = `import {
  FINGERPRINT,
  FORMAT_VERSION,
  GENERATION,
  UrlGenerationError,
  load,
  match,
  routes,
  setBaseUrl,
  urlFor,
  type MatchResult,
  type RouteInfo,
  type RouteName,
} from './cache/router.mjs'
import type { MatchResult as FwMatchResult, RouteInfo as FwRouteInfo } from 'fw/runtime'

await load()
setBaseUrl('https://example.test')
const hit: FwMatchResult = match('GET', '/users/1', null)
export const found: string | null = 'route' in hit ? hit.route.name : null
export const allow: readonly string[] = 'allow' in hit ? hit.allow : []
export const table: readonly FwRouteInfo[] = routes
export const build: [string, number, string] = [FINGERPRINT, FORMAT_VERSION, GENERATION]
export const names: RouteName[] = ['home', 'users.show', 'café-menu.ünï', 'smile.\\u{1F600}']
export const urls: string[] = [
  urlFor('home'),
  urlFor('users.show', { id: 1 }, { tab: 'posts' }, true),
  urlFor('café-menu.ünï', { code: 'ABC' }),
  urlFor('smile.\\u{1F600}'),
]
export function codeOf(error: unknown): string | null {
  return error instanceof UrlGenerationError ? error.code : null
}

// fw/runtime's types and the cache's are one shape, either way round.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const sameMatch: Same<MatchResult, FwMatchResult> = true
export const sameRoute: Same<RouteInfo, FwRouteInfo> = true

// @ts-expect-error: no route has that name
urlFor('nope')
// @ts-expect-error: the name without its accents is another
urlFor('cafe-menu.uni', { code: 'ABC' })
// @ts-expect-error: an int parameter
urlFor('users.show', { id: 'x' })
// @ts-expect-error: a route without a name cannot be generated
urlFor('unnamed')
`

const { ModuleKind: Module, ModuleResolutionKind: Resolution } = ts
const SETTINGS: [string, ts.CompilerOptions][] = [
  ['nodenext', { moduleResolution: Resolution.NodeNext, module: Module.NodeNext }],
  ['bundler', { moduleResolution: Resolution.Bundler, module: Module.ESNext }],
  ['node10', { moduleResolution: Resolution.Node10, module: Module.ESNext }],
]

let dir: string

beforeAll(async () => {
  assertBuilt()
  dir = makeProject({ 'routes.mjs': ROUTES, 'package.json': '{ "type": "module" }' })
  // node_modules/fw as an install makes it, for the server's `fw/runtime`.
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
  const built = await runFw(
    ['route:cache', 'build', '--routes', 'routes.mjs', '--cache', 'cache'],
    { cwd: dir },
  )
  expect(built.code, built.stderr).toBe(0)
  writeFiles(dir, { 'server.ts': SERVER })
})
afterAll(cleanupProjects)

describe('router.d.mts', () => {
  it('is ASCII, names beyond it escaped, under the banner of every generated file', () => {
    const text = readFileSync(join(dir, 'cache', 'router.d.mts'), 'utf8')
    expect(text.startsWith(`${GENERATED_MARK} - do not edit; rebuild instead.\n`)).toBe(true)
    expect(text.split('\n').filter((line) => /[^\x00-\x7f]/.test(line))).toEqual([])
    expect(text).toContain('"caf\\u00e9-menu.\\u00fcn\\u00ef": ')
    expect(text).toContain('"smile.\\ud83d\\ude00": ')
  })

  it.each(SETTINGS)(
    'types a strict server.ts under moduleResolution %s, declaration checked too',
    (_, settings) => {
      const options: ts.CompilerOptions = {
        ...settings,
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        types: [],
      }
      const program = ts.createProgram([join(dir, 'server.ts')], options)
      const declaration = program.getSourceFile(join(dir, 'cache', 'router.d.mts'))
      expect(declaration, 'router.mjs resolved to its declaration').toBeDefined()
      const messages = [
        ...program.getGlobalDiagnostics(),
        ...ts.getPreEmitDiagnostics(program, program.getSourceFile(join(dir, 'server.ts'))),
        ...ts.getPreEmitDiagnostics(program, declaration),
      ].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      expect(messages).toEqual([])
    },
  )
})
