/**
 * fw as a package, as `npm pack` ships it: the tarball holds everything the runtime, the CLI,
 * `fw init` and TypeScript consumers need (every "exports" target, the templates, the bin) and
 * nothing else (no tests, sources or source maps naming TypeScript files it does not hold); each
 * export's types resolve under the module resolutions users pick; the Node versions "engines"
 * admits can run it; and an app `fw init` makes approves the install scripts fw's dependencies need.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, FW_BIN, REPO_ROOT, runNode } from '../support/project.js'

interface PackedFile {
  path: string
  mode: number
}
type Conditions = { types: string; default: string }

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  license: string
  engines: { node: string }
  types: string
  bin: Record<string, string>
  exports: Record<string, string | Conditions>
  dependencies: Record<string, string>
  allowScripts: Record<string, boolean>
}
const subpaths = Object.entries(manifest.exports).filter(
  (entry): entry is [string, Conditions] => typeof entry[1] !== 'string',
)
let packed: PackedFile[] = []

beforeAll(() => {
  assertBuilt()
  // --dry-run lists what `npm pack` would put in the tarball; --offline: no registry is asked.
  const result = spawnSync(
    'npm',
    ['pack', '--dry-run', '--json', '--offline', '--ignore-scripts'],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  )
  expect(result.status, result.stderr).toBe(0)
  packed = (JSON.parse(result.stdout) as { files: PackedFile[] }[])[0]!.files
})

describe('the packed tarball', () => {
  const paths = (): Set<string> => new Set(packed.map((file) => file.path))
  const strip = (target: string): string => target.replace(/^\.\//, '')

  it('holds the license its package.json names', () => {
    expect(manifest.license).toBe('MIT')
    expect(paths()).toContain('LICENSE')
    expect(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/)
  })

  it('holds every export target, the top-level types and the bin, which exist', () => {
    const targets = [
      ...subpaths.flatMap(([, conditions]) => [conditions.types, conditions.default]),
      manifest.types,
      ...Object.values(manifest.bin),
    ].map(strip)
    for (const target of targets) {
      expect(paths(), target).toContain(target)
      expect(existsSync(join(REPO_ROOT, target)), target).toBe(true)
    }
  })

  it('holds the bin as an executable', () => {
    const bin = packed.find((file) => file.path === strip(manifest.bin.fw!))
    expect(bin?.mode.toString(8)).toBe('755')
    expect(readFileSync(FW_BIN, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/)
  })

  it('holds every template fw init and the build copy', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
      )
    const templates = walk(join(REPO_ROOT, 'templates')).map((file) => relative(REPO_ROOT, file))
    expect(templates).toContain('templates/init/gitignore')
    expect(templates).toContain('templates/cache/helpers.mjs')
    for (const file of templates) expect(paths(), file).toContain(file)
  })

  it('holds nothing else: no tests, sources, benchmarks, caches or source maps', () => {
    const strays = packed
      .map((file) => file.path)
      .filter(
        (path) =>
          !/^(bin|dist|templates)\//.test(path) &&
          !/^(package\.json|README\.md|LICENSE)$/.test(path),
      )
    expect(strays).toEqual([])
    expect(packed.filter((file) => file.path.endsWith('.map'))).toEqual([])
    expect(packed.filter((file) => /(^|\/)(\.fw|node_modules|\.cache)\//.test(file.path))).toEqual(
      [],
    )
  })
})

describe("each export's types, as a consumer's TypeScript resolves them", () => {
  let app = ''
  beforeAll(() => {
    // An app whose node_modules/fw is this package: resolution goes through its "exports".
    app = mkdtempSync(join(tmpdir(), 'fw-package-'))
    mkdirSync(join(app, 'node_modules'))
    symlinkSync(REPO_ROOT, join(app, 'node_modules', 'fw'), 'dir')
    writeFileSync(join(app, 'package.json'), '{ "type": "module" }\n')
  })
  afterAll(() => rmSync(app, { recursive: true, force: true }))

  const modes = {
    nodenext: {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    },
    node16: { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 },
    bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
  }
  for (const [mode, options] of Object.entries(modes)) {
    it(`resolves under moduleResolution ${mode}`, () => {
      for (const [subpath, conditions] of subpaths) {
        const specifier = subpath === '.' ? 'fw' : `fw/${subpath.slice(2)}`
        const { resolvedModule } = ts.resolveModuleName(
          specifier,
          join(app, 'server.ts'),
          options,
          ts.sys,
        )
        expect(resolvedModule?.resolvedFileName, specifier).toBe(join(REPO_ROOT, conditions.types))
      }
    })
  }

  it('resolves `fw` through the top-level "types" under the legacy node10 resolution', () => {
    const { resolvedModule } = ts.resolveModuleName(
      'fw',
      join(app, 'server.ts'),
      { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Node10 },
      ts.sys,
    )
    expect(resolvedModule?.resolvedFileName).toBe(join(REPO_ROOT, manifest.types))
  })
})

describe('the Node versions it runs on', () => {
  it('admits in "engines" only versions that can require() ES modules (20.19+, 22.12+)', () => {
    expect(manifest.engines.node).toBe('^20.19.0 || >=22.12.0')
  })

  it('has the bin say so on a Node that cannot, instead of a "damaged" cache at every request', async () => {
    const result = await runNode(['--no-experimental-require-module', FW_BIN, '--version'], {
      cwd: REPO_ROOT,
    })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(
      /^error fw needs Node\.js 20\.19\+ or 22\.12\+ \(this is v[\d.]+\)\n {2}hint: \S/,
    )
  })

  it('runs the bin where it can', async () => {
    const result = await runNode([FW_BIN, '--version'], { cwd: REPO_ROOT })
    expect(result.code, result.stderr).toBe(0)
  })
})

describe('an app fw init scaffolds', () => {
  it("approves the install scripts of fw's dependencies (npm 11 asks for allowScripts)", () => {
    const template = JSON.parse(
      readFileSync(join(REPO_ROOT, 'templates', 'init', 'package.json'), 'utf8'),
    ) as { allowScripts?: Record<string, boolean> }
    const withScripts = Object.keys(manifest.dependencies).filter((name) => {
      const dir = join(REPO_ROOT, 'node_modules', name)
      const { scripts = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>
      }
      return (
        ['preinstall', 'install', 'postinstall'].some((hook) => hook in scripts) ||
        existsSync(join(dir, 'binding.gyp'))
      )
    })
    expect(withScripts.sort()).toEqual(['better-sqlite3', 'esbuild'])
    for (const name of withScripts) {
      expect(template.allowScripts?.[name], name).toBe(true)
      expect(manifest.allowScripts[name], name).toBe(true)
    }
  })
})
