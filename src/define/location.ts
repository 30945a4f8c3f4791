/**
 * Finds where in the user's code a route was registered, from the call stack. Only the compiler
 * asks for it (it costs a stack trace per route); with source maps enabled the frames point into
 * the user's TypeScript.
 */
import { relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceLocation } from '../shared/errors.js'

// Frames inside fw itself (dist/ or src/) are skipped: the first frame outside is the caller.
const OWN_DIR = fileURLToPath(new URL('..', import.meta.url))
const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/

export function captureLocation(): SourceLocation | undefined {
  const holder: { stack?: string } = {}
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 30
  Error.captureStackTrace(holder, captureLocation)
  Error.stackTraceLimit = limit
  for (const line of (holder.stack ?? '').split('\n').slice(1)) {
    const found = FRAME.exec(line.trim())
    if (!found) continue
    const file = found[1]!.startsWith('file://') ? fileURLToPath(found[1]!) : found[1]!
    if (file.startsWith(OWN_DIR) || file.startsWith('node:') || !file.includes(sep)) continue
    return { file: displayPath(file), line: Number(found[2]), column: Number(found[3]) }
  }
  return undefined
}

/** A path relative to the working directory when inside it, else absolute. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel.startsWith('..') ? file : rel
}
