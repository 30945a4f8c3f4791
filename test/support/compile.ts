/** Test helpers: compile a routes function in-process into a temp cache and import it. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { buildRouter } from '../../src/compiler/build.js'
import { writeCache } from '../../src/compiler/write-cache.js'
import type { MatchResult } from '../../src/runtime/load-router.js'

export interface CompiledModule {
  match(method: string, path: string, host?: string | null): MatchResult
  urlFor(name: string, params?: object, query?: object, absolute?: boolean | string): string
  routes: readonly {
    id: number
    name: string | null
    path: string
    method: string
    middleware: readonly string[]
  }[]
  dir: string
}

const dirs: string[] = []

/** A fresh temp directory, removed by `cleanupTempDirs`. */
export function tempDir(prefix = 'fw-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

export function cleanupTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Registers, compiles and imports; throws the compiler's FwError on invalid routes. */
export async function compileRoutes(register: (r: Registrar) => void): Promise<CompiledModule> {
  const registrar = collectRoutes(register)
  const output = buildRouter(registrar.routes, { aliases: new Set(registrar.aliases.keys()) })
  const dir = join(tempDir(), 'cache')
  await writeCache(dir, output)
  const module = (await import(
    pathToFileURL(join(dir, output.generation, 'index.mjs')).href
  )) as CompiledModule
  return { match: module.match, urlFor: module.urlFor, routes: module.routes, dir }
}

/** A handler that does nothing (only its identity matters to the router). */
export const noop = (): null => null
