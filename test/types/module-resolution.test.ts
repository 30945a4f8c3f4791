/**
 * An app importing fw by name under each `moduleResolution` TypeScript offers. Regression:
 * `node10` (the classic "node", still the default of `module: commonjs`) reads no package.json
 * "exports", so `fw/runtime`, `fw/auth`, `fw/throttle` and `fw/compiler` did not resolve (TS2307)
 * until package.json mapped them in "typesVersions"; node16, nodenext and bundler follow
 * "exports" still. The app is a temp folder whose node_modules/fw links to this package, as an
 * install makes it; each import is proved typed, not `any`, by a mistake it must refuse.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT } from '../support/project.js'

// One import per entry point; the line after each `@ts-expect-error` fails only when it is typed.
const APP = `import type { Registrar } from 'fw'
import type { KernelOptions, MatchResult } from 'fw/runtime'
import type { AuthOptions } from 'fw/auth'
import type { ThrottleOptions } from 'fw/throttle'
import type { BuildOptions } from 'fw/compiler'

export const register = (r: Registrar): void => {
  r.get('/', () => 'home', 'home')
}
export const kernel: Pick<KernelOptions, 'routeCache'> = { routeCache: '.fw/cache' }
export const miss: MatchResult = { status: 404 }
export const auth: AuthOptions = { secret: 'x'.repeat(32) }
export const throttle: ThrottleOptions = { standardHeaders: 'draft-8' }
export const build: BuildOptions = { now: new Date(0) }

// @ts-expect-error
export const bad1 = (r: Registrar) => r.get(1)
// @ts-expect-error
export const bad2: KernelOptions = { routeCache: 1 }
// @ts-expect-error
export const bad3: MatchResult = { status: 200 }
// @ts-expect-error
export const bad4: AuthOptions = { secret: 1 }
// @ts-expect-error
export const bad5: ThrottleOptions = { standardHeaders: 1 }
// @ts-expect-error
export const bad6: BuildOptions = { now: 0 }
`

const { ModuleKind: Module, ModuleResolutionKind: Resolution } = ts
const SETTINGS: [string, ts.CompilerOptions][] = [
  ['node10, commonjs', { moduleResolution: Resolution.Node10, module: Module.CommonJS }],
  ['node10, esnext', { moduleResolution: Resolution.Node10, module: Module.ESNext }],
  ['node16', { moduleResolution: Resolution.Node16, module: Module.Node16 }],
  ['nodenext', { moduleResolution: Resolution.NodeNext, module: Module.NodeNext }],
  ['bundler', { moduleResolution: Resolution.Bundler, module: Module.ESNext }],
]

let app: string

beforeAll(() => {
  assertBuilt()
  const dir = makeProject({ 'app.ts': APP, 'package.json': '{ "type": "module" }' })
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
  app = join(dir, 'app.ts')
})
afterAll(cleanupProjects)

describe('an app importing every entry point of fw', () => {
  it.each(SETTINGS)('compiles under moduleResolution %s, each entry typed', (_, settings) => {
    const options: ts.CompilerOptions = {
      ...settings,
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      types: [],
    }
    const program = ts.createProgram([app], options)
    const messages = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(messages).toEqual([])
  })

  it('maps every subpath "exports" types in "typesVersions" too, to the same declarations', () => {
    interface Manifest {
      exports: Record<string, string | { types?: string }>
      typesVersions: Record<string, Record<string, string[]>>
    }
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest
    const typed = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
      subpath !== '.' && typeof target === 'object' && target.types
        ? [[subpath.slice(2), [target.types]] as const]
        : [],
    )
    expect(typed.length).toBeGreaterThanOrEqual(4)
    expect(manifest.typesVersions['*']).toEqual(Object.fromEntries(typed))
  })
})
