/** Small helpers for emitting readable JavaScript. Every literal goes through `lit`. */
import { GENERATED_MARK } from '../../shared/cache-format.js'

/**
 * ASCII only, as all of fw's own text in generated modules: V8 keeps a module's source for as long
 * as the module lives (a process's lifetime: ES modules are never unloaded), one byte a character
 * while every character is Latin-1, two bytes for the whole file once one is not. An em dash here
 * cost each generation ~64 KB of heap (the example app's), ~6 MB for 10,000 routes.
 */
export const BANNER = (what: string): string =>
  `${GENERATED_MARK} - do not edit; rebuild instead.\n// ${what}\n`

// A character outside ASCII in a route's name, constraint or host, written as a \u escape in
// literals and comments alike: one would make V8 keep the whole module at two bytes (BANNER).
const NON_ASCII = /[^\x00-\x7f]/g
const escapeNonAscii = (text: string): string =>
  text.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** A JavaScript literal for any JSON-able value, ASCII only. */
export function lit(value: unknown): string {
  // (undefined has no JSON: written as the word, as a template literal wrote it.)
  return escapeNonAscii(JSON.stringify(value) ?? 'undefined')
}

/**
 * An object-literal key for user text (a route or parameter name). A plain `"__proto__": v` sets
 * the object's prototype instead of a property (and clashes with a `__proto__: null` line), so
 * that one name is written as a computed key, which always defines an own property.
 * @example
 * propKey('id') // '"id"'; propKey('__proto__') // '["__proto__"]'
 */
export function propKey(name: string): string {
  return name === '__proto__' ? `[${lit(name)}]` : lit(name)
}

/**
 * A comment-safe rendering of user text (patterns can contain `*\/`). U+2028 and U+2029 end a
 * line in JavaScript too, and so a `//` comment (a domain regex may hold one).
 */
export function safeComment(text: string): string {
  return escapeNonAscii(text.replace(/\*\//g, '*\\/').replace(/[\r\n\u2028\u2029]/g, ' '))
}

/** Collects lines with indentation; `block` indents what its callback writes. */
export class CodeWriter {
  readonly #lines: string[] = []
  #depth = 0

  line(text = ''): this {
    this.#lines.push(text === '' ? '' : '  '.repeat(this.#depth) + text)
    return this
  }

  block(open: string, write: () => void, close = '}'): this {
    this.line(open)
    this.indent(write)
    return this.line(close)
  }

  indent(write: () => void): this {
    this.#depth++
    write()
    this.#depth--
    return this
  }

  toString(): string {
    return this.#lines.join('\n') + '\n'
  }
}

// Up to this length a literal is compared character by character inline (TurboFan turns each
// test into a load and a compare); longer ones go through String.prototype.startsWith. On a
// request path that is a slice of a longer string (a V8 SlicedString, what `url.slice(0, q)`
// gives), startsWith costs ~5 ns per character and a charCodeAt test ~3 ns, so inline wins up
// to well past 20 characters; past 32 the code size is no longer worth it.
const INLINE_COMPARE_MAX = 32

/**
 * A test that `path` holds `literal` at index expression `at` (which may be `j + 1`), but for
 * its first `skip` characters, already tested (by a switch on them).
 * @example
 * hasLiteral('ab', 'j2') // '/* ab *\/ path.charCodeAt(j2) === 97 && path.charCodeAt(j2 + 1) === 98'
 */
export function hasLiteral(literal: string, at: string, skip = 0): string {
  if (literal.length > INLINE_COMPARE_MAX) return `path.startsWith(${lit(literal)}, ${at})`
  const tests = [...literal]
    .map((c, i) => `path.charCodeAt(${i === 0 ? at : `${at} + ${i}`}) === ${c.charCodeAt(0)}`)
    .slice(skip)
  return `/* ${safeComment(literal)} */ ${tests.length === 0 ? 'true' : tests.join(' && ')}`
}

// A static path up to this length is compared with `===` alone: V8 slices a string that short
// into a new flat copy, never a SlicedString, and on a flat string `===` is one builtin call
// (~5 ns; a chain of charCodeAt tests costs more, and much more code). A longer path may arrive
// as a SlicedString (`url.slice(0, q)` with a query string), where `===` is a runtime call
// (~45 ns even when it fails on the second character), so character probes guard it.
const STATIC_FLAT_MAX = 12

/**
 * The static paths of one method: `switch (len)`, then (for several paths of one length) a
 * switch on the character position where they differ most, then the full comparison. A path
 * that is not static (most dynamic requests) is turned away by one or two integer compares
 * instead of a string comparison per candidate of its length.
 * @example
 * emitStaticSwitch(out, new Map([['/a', v]]), (v) => `HIT${v.id}`)
 */
export function emitStaticSwitch<V>(
  out: CodeWriter,
  statics: ReadonlyMap<string, V>,
  result: (v: V) => string,
): void {
  if (statics.size === 0) return
  const byLength = new Map<number, [string, V][]>()
  for (const entry of statics)
    byLength.set(entry[0].length, [...(byLength.get(entry[0].length) ?? []), entry])
  // Position 0 is always '/', checked by match(). A hit pays for every probe, so a longer path
  // gets few: besides the switch's character, the first of its first segment (a dynamic path of
  // another bucket fails there) and, alone at its length, the middle one. A dynamic path that
  // slips through pays the slow `===`, as /users/julienschmidt would against /search/repositories.
  const equals = (path: string, switched: number | null): string => {
    if (path.length <= STATIC_FLAT_MAX) return `path === ${lit(path)}`
    const mid = path.length >> 1
    const probes = switched === null ? [1, mid] : [switched === 1 ? mid : 1]
    const tests = probes.map((i) => `path.charCodeAt(${i}) === ${path.charCodeAt(i)}`)
    return `${tests.join(' && ')} && path === ${lit(path)}`
  }
  out.block('switch (len) {', () => {
    for (const [length, entries] of [...byLength].sort((a, b) => a[0] - b[0])) {
      if (length === 1) {
        // match() let only paths starting with '/' through: of length 1, that is "/".
        out.line(`case 1: return ${result(entries[0]![1])} // "/"`)
        continue
      }
      if (entries.length === 1) {
        const [path, v] = entries[0]!
        out.line(`case ${length}: if (${equals(path, null)}) return ${result(v)}; break`)
        continue
      }
      const at = discriminatingIndex(entries.map((e) => e[0]))
      const byChar = new Map<number, [string, V][]>()
      for (const entry of entries) {
        const code = entry[0].charCodeAt(at)
        byChar.set(code, [...(byChar.get(code) ?? []), entry])
      }
      out.line(`case ${length}:`)
      out.indent(() => {
        out.block(`switch (path.charCodeAt(${at})) {`, () => {
          for (const [code, group] of byChar) {
            const tests = group.map(([path, v]) => `if (${equals(path, at)}) return ${result(v)}`)
            out.line(`case ${code}: ${tests.join('; ')}; break`)
          }
        })
        out.line('break')
      })
    }
  })
}

/** The index (past the leading '/') where `paths` (all one length) show the most distinct characters; the last on ties. */
function discriminatingIndex(paths: readonly string[]): number {
  let best = paths[0]!.length - 1
  let bestCount = 0
  for (let i = paths[0]!.length - 1; i >= 1; i--) {
    const count = new Set(paths.map((p) => p.charCodeAt(i))).size
    if (count > bestCount) {
      best = i
      bestCount = count
    }
  }
  return best
}
