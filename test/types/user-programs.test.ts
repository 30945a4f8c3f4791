/**
 * The types an app meets, as it meets them: programs importing `fw`, `fw/runtime`, `fw/auth`,
 * `fw/throttle` and `fw/compiler` by name (package.json "exports" → the built dist/*.d.ts),
 * compiled with the tsconfig `fw init` scaffolds (strict). Every TypeScript example of the README
 * compiles, and so does each program in fixtures/, but the line after each
 * `// @ts-expect-error TSnnnn` there, which must fail with that code. One compiler run.
 *
 * Regressions (a typed-API audit): a route parameter left unannotated was a silent `any`
 * (`(req, id) => id.toFixd()` compiled: the verbs took `...params: any[]`); an alias function
 * that forgot to return next()'s response compiled (r.alias took any return), as did an async
 * routes function or group callback, whose late routes the build refuses (FW_ROUTES_ASYNC); an
 * invoker could not call the handler it was given (`handler(request, ...params)`: its parameters
 * were `never`); and types an app annotates with were not exported (Invoker, AliasTarget,
 * ServiceProviderClass, CreateRequestInit, NodeListener, ...).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, REPO_ROOT } from '../support/project.js'

const FIXTURES = join(REPO_ROOT, 'test', 'types', 'fixtures')
// README examples are served to the compiler from here (never written), so 'fw' resolves by
// the package's own name, through its "exports", as from an app's node_modules.
const README_DIR = join(REPO_ROOT, 'test', 'types', '__readme')
const EXPECT = /\/\/ @ts-expect-error(?: (TS\d+))?/

// What the README's snippets (blocks without imports) use, and the routes around them.
const SNIPPET_PRELUDE = [
  "import { defineRoutes, file, forbidden, safePath, type Middleware } from 'fw'",
  'declare const report: () => string',
  'export default defineRoutes((r) => {',
]

interface Source {
  text: string
  /** Where a diagnostic's line points to, for the message. */
  describe: (line: number) => string
}

/** The README's ```ts blocks as modules: `README_DIR/L<line>.ts` → text. */
function readmeSources(): Map<string, Source> {
  const lines = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').split('\n')
  const sources = new Map<string, Source>()
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue
    const end = lines.indexOf('```', i + 1)
    const block = lines.slice(i + 1, end)
    const snippet = !block.some((line) => line.startsWith('import '))
    const prelude = snippet ? SNIPPET_PRELUDE : []
    const text = [...prelude, ...block, ...(snippet ? ['})'] : [])].join('\n')
    const first = i + 2
    sources.set(join(README_DIR, `L${first}.ts`), {
      text,
      describe: (line) => `README.md:${first + line - 1 - prelude.length}`,
    })
    i = end
  }
  // The modules the examples import from beside them.
  const stub = (text: string): Source => ({ text, describe: () => 'a README stub' })
  sources.set(join(README_DIR, 'app', 'users.ts'), stub('export class UserController {}'))
  sources.set(
    join(README_DIR, 'routes.ts'),
    stub("export { default } from '../fixtures/routes.js'"),
  )
  return sources
}

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? fixtureFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

/** The fixture with its `@ts-expect-error` directives disarmed, and the failures they expect. */
function fixtureSource(file: string, expected: string[]): Source {
  const name = relative(REPO_ROOT, file)
  const lines = readFileSync(file, 'utf8').split('\n')
  lines.forEach((line, i) => {
    const found = EXPECT.exec(line)
    if (!found) return
    expect(
      found[1],
      `${name}:${i + 1}: name the error code, // @ts-expect-error TS2345`,
    ).toBeTruthy()
    expected.push(`${name}:${i + 2} ${found[1]}`)
    lines[i] = line.replace('@ts-expect-error', 'expected:')
  })
  return { text: lines.join('\n'), describe: (line) => `${name}:${line}` }
}

/** Diagnostics of one program over `sources`, as `<where> TSnnnn` and with their messages. */
function compile(sources: Map<string, Source>): { found: string[]; messages: string[] } {
  const config = JSON.parse(
    readFileSync(join(REPO_ROOT, 'templates', 'init', 'tsconfig.json'), 'utf8'),
  ) as { compilerOptions: object }
  const { options, errors } = ts.convertCompilerOptionsFromJson(config.compilerOptions, REPO_ROOT)
  expect(errors).toEqual([])
  const host = ts.createCompilerHost(options)
  const read = host.readFile.bind(host)
  const exists = host.fileExists.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  const directoryExists = host.directoryExists?.bind(host)
  host.fileExists = (name) => sources.has(name) || exists(name)
  host.directoryExists = (name) =>
    name.startsWith(README_DIR) || (directoryExists?.(name) ?? ts.sys.directoryExists(name))
  host.readFile = (name) => sources.get(name)?.text ?? read(name)
  host.getSourceFile = (name, version, ...rest) => {
    const source = sources.get(name)
    return source
      ? ts.createSourceFile(name, source.text, version)
      : getSourceFile(name, version, ...rest)
  }
  const program = ts.createProgram([...sources.keys()], options, host)
  const found: string[] = []
  const messages: string[] = []
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start!).line + 1 : 0
    const where = d.file ? (sources.get(d.file.fileName)?.describe(line) ?? d.file.fileName) : ''
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n  ')
    found.push(`${where} TS${d.code}`)
    messages.push(`${where} TS${d.code}: ${text}`)
  }
  return { found: [...new Set(found)].sort(), messages }
}

describe('programs an app writes, compiled against the built package', () => {
  beforeAll(() => {
    assertBuilt()
    expect(existsSync(join(REPO_ROOT, 'dist', 'index.d.ts'))).toBe(true)
  })

  it('compile, the README examples included; the mistakes marked in fixtures/ are refused', () => {
    const expected: string[] = []
    const sources = readmeSources()
    expect(sources.size).toBeGreaterThan(8)
    for (const file of fixtureFiles(FIXTURES)) sources.set(file, fixtureSource(file, expected))
    expect(expected.length).toBeGreaterThan(10)

    const { found, messages } = compile(sources)

    expect(found, messages.join('\n')).toEqual([...new Set(expected)].sort())
  }, 60_000)
})
