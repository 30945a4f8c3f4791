/**
 * Finds where in the user's code a route was registered, from the call stack. Only the compiler
 * asks for it. It reads raw call sites (no stack string formatting, which costs ~0.1 ms a frame
 * with source maps on) and maps the one it needs through the module's source map, so locations
 * point into the user's TypeScript.
 */
import { findSourceMap } from 'node:module'
import { relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceLocation } from '../shared/errors.js'
import { thrownStack } from '../shared/thrown.js'

// Frames inside fw itself (dist/ or src/) are skipped: the first frame outside is the caller.
const OWN_DIR = fileURLToPath(new URL('..', import.meta.url))

interface CallSite {
  getFileName(): string | undefined | null
  getLineNumber(): number | null
  getColumnNumber(): number | null
}

/**
 * Captures the caller's call sites now (cheap) and resolves them to a location only when asked:
 * V8 computes a frame's line number slowly (~0.1 ms in a large function), and only routes that
 * end up in an error message need one.
 */
export function captureLocation(): () => SourceLocation | undefined {
  const previous = Error.prepareStackTrace
  const limit = Error.stackTraceLimit
  const holder: { stack?: unknown } = {}
  try {
    Error.prepareStackTrace = (_error, sites) => sites
    Error.stackTraceLimit = 12
    Error.captureStackTrace(holder, captureLocation)
    const sites = (holder.stack ?? []) as CallSite[]
    let resolved: SourceLocation | undefined | null = null
    return () => (resolved === null ? (resolved = resolve(sites)) : resolved)
  } finally {
    Error.prepareStackTrace = previous
    Error.stackTraceLimit = limit
  }
}

function resolve(sites: CallSite[]): SourceLocation | undefined {
  for (const site of sites) {
    const name = site.getFileName()
    if (!name || name.startsWith('node:')) continue
    const file = name.startsWith('file://') ? fileURLToPath(name) : name
    if (file.startsWith(OWN_DIR) || !file.includes(sep)) continue
    return mapThroughSourceMap(name, file, site.getLineNumber() ?? 1, site.getColumnNumber() ?? 1)
  }
  return undefined
}

// findSourceMap builds a new SourceMap (parsing the whole map) on every call: keep one per file.
const maps = new Map<string, ReturnType<typeof findSourceMap>>()

function mapThroughSourceMap(
  name: string,
  file: string,
  line: number,
  column: number,
): SourceLocation {
  if (!maps.has(name)) maps.set(name, findSourceMap(name))
  const entry = maps.get(name)?.findEntry(line - 1, column - 1) as
    { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined
  if (entry?.originalSource === undefined || entry.originalLine === undefined) {
    return { file: displayPath(file), line, column }
  }
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : entry.originalSource
  return {
    file: displayPath(source),
    line: entry.originalLine + 1,
    column: (entry.originalColumn ?? 0) + 1,
  }
}

/** A path relative to the working directory when inside it, else absolute. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel.startsWith('..') ? file : rel
}

// A frame's file, `at fn (/app/x.ts:2:9)` or `at /app/x.ts:2:9` (file:// URL or not): the path
// starts right after '(' or 'at '. Unanchored, `at listOnTimeout (node:internal/timers:581:17)`
// read as the file '/timers', which inAppCode took for the app's: a package's error was printed
// as the app's, at /timers:581:17.
const STACK_FRAME_FILE = /(?:^at (?:async )?|\()(?:file:\/\/)?(\/[^()]+?):(\d+):(\d+)\)?$/

/**
 * Where `error` was thrown in the user's code: its first stack frame whose file `accept`s
 * (source maps are on for imported modules, so frames point into the user's source).
 * @example
 * locateInStack(error, (path) => path === configFile)
 */
export function locateInStack(
  error: unknown,
  accept: (path: string) => boolean,
): SourceLocation | undefined {
  for (const line of thrownStack(error).split('\n')) {
    const m = STACK_FRAME_FILE.exec(line.trim())
    if (m && accept(m[1]!))
      return { file: displayPath(m[1]!), line: Number(m[2]), column: Number(m[3]) }
  }
  return undefined
}

// fw's command-line entry (bin/fw.js), beside dist/.
const OWN_BIN = fileURLToPath(new URL('../../bin/', import.meta.url))

/** Whether `path` (a stack frame's file) is in the app: not in fw itself, a package or Node. */
export function inAppCode(path: string): boolean {
  return (
    !path.startsWith(OWN_DIR) &&
    !path.startsWith(OWN_BIN) &&
    !path.includes(`${sep}node_modules${sep}`)
  )
}
