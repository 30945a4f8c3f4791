/**
 * The pattern grammar shared by the compiler and the reference matcher.
 *
 * A path pattern is a list of `/`-separated segments. Each segment is either literal text or
 * exactly one parameter in braces:
 *
 * | form            | matches                                          | value       |
 * |-----------------|--------------------------------------------------|-------------|
 * | `{name}`        | one non-empty segment                            | string      |
 * | `{name?}`       | an optional trailing segment                     | string/null |
 * | `{name:int}`    | 1–15 ASCII digits                                | number      |
 * | `{name?:int}`   | an optional trailing int (any type: `?` after the name) | number/null |
 * | `{name:slug}`   | lowercase letters and digits joined by single `-` | string      |
 * | `{name:uuid}`   | 8-4-4-4-12 hex digits, any case                  | string      |
 * | `{name:hex}`    | hex digits, any case                             | string      |
 * | `{name:<regex>}`| a segment the regex matches whole (`^`/`$` implied) | string    |
 * | `{name:.*}`     | the rest of the path, slashes included, maybe '' | string      |
 * | `{name:.+}`     | the rest of the path, non-empty                  | string      |
 *
 * Domain patterns use the same grammar with `.` as the separator (`{account}.example.com`).
 *
 * Refused because they silently mean something else: a type with a quantifier (`{n:int?}` is the
 * regex "in" or "int"), and the `u`-flag escapes `\p{...}`, `\P{...}`, `\u{...}` in a regex
 * (compiled without that flag, `\p{L}` is the text "p{L}"; see regex-constraint.ts).
 */
import { FwError } from './errors.js'
import { splitOutsideBraces, stripParams } from './pattern/braces.js'
import { patternError } from './pattern/errors.js'
import { parseSegment } from './pattern/segment.js'
import type { Segment } from './pattern/types.js'
import { canConsume } from './regex-safety.js'

export {
  BUILTIN_REGEX,
  BUILTIN_TYPES,
  type BuiltinType,
  type ParamSegment,
  type Segment,
  type StaticSegment,
} from './pattern/types.js'

/**
 * Parses a path pattern such as `/users/{id:int}/posts/{slug?}` into segments.
 * `/` alone gives no segments.
 * @example
 * parsePath('/users/{id:int}') // [{ kind: 'static', value: 'users' }, { kind: 'param', ... }]
 */
export function parsePath(pattern: string): Segment[] {
  if (!pattern.startsWith('/')) {
    throw patternError(pattern, 'must start with "/"')
  }
  if (pattern.startsWith('//')) throw patternError(pattern, 'has an empty segment ("//")')
  if (/[?#]/.test(stripParams(pattern))) {
    throw patternError(pattern, 'must not contain "?" or "#"; pass query values to urlFor instead')
  }
  const body = pattern.length > 1 && pattern.endsWith('/') ? pattern.slice(1, -1) : pattern.slice(1)
  if (body === '') return []
  const segments = splitOutsideBraces(pattern, body, '/').map((raw) =>
    parseSegment(pattern, raw, false),
  )
  const dots = segments.find((s) => s.kind === 'static' && DOT_SEGMENT.test(s.value))
  if (dots?.kind === 'static') {
    throw patternError(
      pattern,
      `has the segment "${dots.value}", which HTTP clients remove before sending a path (RFC 3986 dot-segments; browsers and fetch also remove it escaped): no link reaches it`,
    )
  }
  checkSegmentOrder(pattern, segments)
  return segments
}

// '.' and '..', also escaped (%2e, as the URL standard reads it).
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i

/**
 * Parses a domain pattern such as `{account}.example.com` (labels separated by `.`).
 * Hosts are case-insensitive, so literal labels are lowercased.
 */
export function parseHost(pattern: string): Segment[] {
  const outside = stripParams(pattern)
  if (pattern === '' || outside.includes('/') || outside.includes(':')) {
    throw patternError(
      pattern,
      'is not a domain: a domain pattern is a host name without scheme, port or path',
      true,
    )
  }
  const segments = splitOutsideBraces(pattern, pattern, '.', true).map((raw) => {
    const segment = parseSegment(pattern, raw, true)
    if (segment.kind === 'static') return { kind: 'static' as const, value: raw.toLowerCase() }
    if (segment.optional || segment.type === 'catchall') {
      throw patternError(
        pattern,
        `has an optional or catch-all parameter ("${segment.name}"), which a domain cannot have`,
        true,
      )
    }
    return segment
  })
  checkUniqueNames(pattern, segments)
  return segments
}

/** The names of a pattern's parameters, in order. */
export function paramNames(segments: readonly Segment[]): string[] {
  return segments.flatMap((s) => (s.kind === 'param' ? [s.name] : []))
}

function checkSegmentOrder(pattern: string, segments: Segment[]): void {
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1
    if (segment.kind !== 'param') {
      if (segments.slice(0, index).some((s) => s.kind === 'param' && s.optional)) {
        throw new FwError(
          'FW_OPTIONAL_NOT_TRAILING',
          `Pattern "${pattern}": an optional parameter is followed by "${segment.value}"`,
          { hint: 'Optional parameters must be the last segments of a path.' },
        )
      }
      return
    }
    if (segment.type === 'catchall' && !last) {
      throw new FwError(
        'FW_CATCHALL_NOT_LAST_SEGMENT',
        `Pattern "${pattern}": catch-all "${segment.name}" must be the last segment`,
        { hint: 'A catch-all takes the rest of the path; nothing can follow it.' },
      )
    }
    if (
      !segment.optional &&
      segments.slice(0, index).some((s) => s.kind === 'param' && s.optional)
    ) {
      throw new FwError(
        'FW_OPTIONAL_NOT_TRAILING',
        `Pattern "${pattern}": required "${segment.name}" follows an optional parameter`,
        { hint: 'Optional parameters must be the last segments of a path.' },
      )
    }
  })
  checkUniqueNames(pattern, segments)
}

/** Throws when one parameter name appears twice (also across host and path). */
export function checkUniqueNames(pattern: string, segments: readonly Segment[]): void {
  const seen = new Set<string>()
  for (const name of paramNames(segments)) {
    if (seen.has(name)) {
      throw new FwError(
        'FW_PARAM_DUPLICATE',
        `Pattern "${pattern}": parameter "${name}" is used twice`,
        {
          hint: 'Give every parameter of a route its own name.',
        },
      )
    }
    seen.add(name)
  }
}

/**
 * Whether a regex source could match a `/` (an escape it cannot decode counts as yes). Regexes that
 * cannot are tested in place on the request path; the others on a slice of their segment. What a
 * lookbehind or lookahead holds is not matched, only looked at: `(?<=/)ab` cannot match a `/`.
 */
export function canMatchSlash(source: string): boolean {
  return canConsume(source, SLASH)
}

const SLASH = 47

/** `text` as a regex source matching exactly it. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
