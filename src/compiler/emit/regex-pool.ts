/**
 * The regexes of a shard module's walk, declared once at its top, and how a constraint that looks
 * around its segment is tested in place (shared with urlFor's checks, see tables.ts).
 */
import { canMatchSlash, type ParamSegment } from '../../shared/pattern.js'
import { lit } from './code.js'
import { inlineRegex } from './regex-inline.js'

/**
 * How a constraint that looks around its segment (`^`, `$`, `\b`, lookbehind) is tested in place,
 * so that it sees the path around it as in a whole-path pattern: a sticky regex from the segment's
 * start that must end at the segment's end (null: one that sees only its segment). One that can
 * match a '/' would run past its segment (and, greedy, miss the match that ends at the segment's
 * end), so unless its segment ends the path, it is tested on the path up to and including the
 * '/' after the segment, before which it must end (`beforeSlash`): a lookbehind still sees what
 * comes before (`{x:(?<=/)[^x]+}` matched nothing on its slice), and `$` still only the path's
 * end. urlFor tests them alike.
 */
export function inPlaceTest(source: string): { whole: string; beforeSlash: string | null } | null {
  if (!/[$^]|\\[bB]|\(\?<[=!]/.test(source)) return null
  if (!canMatchSlash(source)) return { whole: `(?:${source})(?=/|$)`, beforeSlash: null }
  return { whole: `(?:${source})$`, beforeSlash: `(?:${source})(?=/)` }
}

/** Regexes a module needs, declared once at its top. */
export class RegexPool {
  readonly #sources = new Map<string, string>()
  /** Character-loop functions for the simple regexes (see regex-inline.ts) by source; null: not one. */
  readonly #loops = new Map<string, { name: string; code: string } | null>()

  /**
   * The test of a segment's regex on path[j, e), declared on first use. A simple regex (a
   * sequence of characters and classes with quantifiers, as `[A-Z]{3}`) becomes a character
   * loop on the path itself: no slice, no regex engine. Otherwise usually the anchored regex on
   * the sliced segment: a short slice is a fresh flat copy, which V8's regex engine runs ~40%
   * faster than a sticky regex on a request path that is itself a slice. A regex that looks at
   * its surroundings (`^`, `$`, `\b`, lookbehind; never a simple one) is tested in place with a
   * sticky regex instead, so it sees the path around it as it would in a whole-path pattern.
   */
  test(segment: ParamSegment, j: string, e: string): string {
    const source = segment.regex!
    const loop = this.#loop(source)
    if (loop !== null) return `${loop.name}(path, ${j}, ${e})`
    const inPlace = inPlaceTest(source)
    if (inPlace === null) {
      return `${this.#declare(`s:^(?:${source})$`)}.test(path.slice(${j}, ${e}))`
    }
    const whole = `sticky(${this.#declare(`y:${inPlace.whole}`)}, path, ${j}, ${e})`
    if (inPlace.beforeSlash === null) return whole
    const beforeSlash = this.#declare(`y:${inPlace.beforeSlash}`)
    return `(${e} === path.length ? ${whole} : sticky(${beforeSlash}, path.slice(0, ${e} + 1), ${j}, ${e}))`
  }

  /** The name of the regex `id` (flags char, ':', source), declared on first use. */
  #declare(id: string): string {
    let name = this.#sources.get(id)
    if (!name) {
      name = `RE${this.#sources.size}`
      this.#sources.set(id, name)
    }
    return name
  }

  /** The declarations, line by line: the regexes, then the loop functions. */
  declarations(): string[] {
    const regexes = [...this.#sources].map(([id, name]) => {
      const flags = id.startsWith('y:') ? 'y' : ''
      return `const ${name} = new RegExp(${lit(id.slice(2))}, ${lit(flags)})`
    })
    const loops = [...this.#loops.values()].flatMap((loop) => (loop ? loop.code.split('\n') : []))
    return [...regexes, ...loops]
  }

  #loop(source: string): { name: string; code: string } | null {
    if (!this.#loops.has(source)) {
      const name = `RX${this.#loops.size}`
      const code = inlineRegex(source, name)
      this.#loops.set(source, code === null ? null : { name, code })
    }
    return this.#loops.get(source)!
  }
}
