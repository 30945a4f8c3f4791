/**
 * The static paths of a shard's method function: one switch in place, or, when there are too
 * many, a switch on the path's length calling functions of their own (S0, S1, ...).
 */
import type { Variant } from '../analyze.js'
import { CodeWriter, emitStaticSwitch } from './code.js'

/** Writes `text`'s lines into `out` at its current indentation. */
export function copyLines(out: CodeWriter, text: string): void {
  if (text.trim() === '') return
  for (const line of text.trimEnd().split('\n')) out.line(line)
}

// Up to this many static paths, a shard function tests them in one switch; more (thousands of
// static paths under one first segment) are split by length into functions of up to this many
// each, so that no function grows past what V8 optimises (~60 KB of bytecode; see walk-outline.ts).
const STATICS_IN_PLACE_MAX = 500
// ... and up to this many characters (the walk's own share is OUTLINE_MAX, see walk-outline.ts).
const STATICS_IN_PLACE_CHARS = 24_000

/** The static paths of a shard part: in place, or a switch on the length calling functions. */
export function emitStatics(
  out: CodeWriter,
  statics: Map<string, Variant>,
  result: (variant: Variant) => string,
  functions: string[],
  named: { count: number },
): void {
  // Bounded in characters too: 500 non-ASCII paths (`/u/caf%C3%A9…`, three characters per
  // byte) made 42 K, which with the walk passed what V8 optimises.
  const inPlace = new CodeWriter()
  if (statics.size <= STATICS_IN_PLACE_MAX) emitStaticSwitch(inPlace, statics, result)
  if (statics.size <= STATICS_IN_PLACE_MAX && inPlace.toString().length <= STATICS_IN_PLACE_CHARS) {
    copyLines(out, inPlace.toString())
    return
  }
  const chunks = chunkByLength(statics)
  out.block('switch (len) {', () => {
    for (const chunk of chunks) emitStaticChunk(out, chunk, result, functions, named)
  })
}

/** The static paths in chunks of whole lengths, each small enough for a function of its own. */
function chunkByLength(statics: Map<string, Variant>): [string, Variant][][] {
  const byLength = new Map<number, [string, Variant][]>()
  for (const entry of statics) {
    const group = byLength.get(entry[0].length)
    if (group) group.push(entry)
    else byLength.set(entry[0].length, [entry])
  }
  // Whole lengths per function (a length of more paths than the maximum stays one function).
  const chunks: [string, Variant][][] = [[]]
  let chars = 0
  for (const [length, group] of [...byLength].sort((a, b) => a[0] - b[0])) {
    const last = chunks.at(-1)!
    // ~2 path lengths of characters per path (the test and the comparison), plus the result.
    const size = group.length * (2 * length + 40)
    if (
      last.length > 0 &&
      (last.length + group.length > STATICS_IN_PLACE_MAX || chars + size > STATICS_IN_PLACE_CHARS)
    ) {
      chunks.push([])
      chars = 0
    }
    chunks.at(-1)!.push(...group)
    chars += size
  }
  return chunks
}

/** A chunk's function (added to `functions`), and the case of the length switch calling it. */
function emitStaticChunk(
  out: CodeWriter,
  chunk: [string, Variant][],
  result: (variant: Variant) => string,
  functions: string[],
  named: { count: number },
): void {
  const name = `S${named.count++}`
  const lengths = [...new Set(chunk.map(([path]) => path.length))]
  const fn = new CodeWriter()
  fn.block(`function ${name}(path, len) {`, () => {
    emitStaticSwitch(fn, new Map(chunk), result)
    fn.line('return null')
  })
  functions.push(fn.toString())
  out.line(`${lengths.map((n) => `case ${n}:`).join(' ')}`)
  out.line(`  { const r = ${name}(path, len); if (r !== null) return r; break }`)
}
