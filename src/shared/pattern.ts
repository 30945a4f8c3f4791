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
import { checkConstraint } from './regex-constraint.js'
import { canConsume } from './regex-safety.js'

/** Built-in constrained types, in the order they are tried against one segment. */
export const BUILTIN_TYPES = ['int', 'uuid', 'hex', 'slug'] as const
export type BuiltinType = (typeof BUILTIN_TYPES)[number]

/** Regex sources of the built-in types (anchoring is added by whoever uses them). */
export const BUILTIN_REGEX: Readonly<Record<BuiltinType, string>> = {
  int: '[0-9]{1,15}',
  uuid: '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  hex: '[0-9a-fA-F]+',
  slug: '[a-z0-9]+(?:-[a-z0-9]+)*',
}

export interface StaticSegment {
  kind: 'static'
  /**
   * The literal as it appears in a request path in RFC 3986 normal form: non-ASCII and spaces
   * percent-encoded with uppercase hex, unreserved characters never encoded.
   */
  value: string
}

export interface ParamSegment {
  kind: 'param'
  name: string
  /** `string` is a plain parameter; `regex` carries `regex`; `catchall` is `.*` or `.+`. */
  type: 'string' | BuiltinType | 'regex' | 'catchall'
  /** The regex source for `regex`, the built-in source for built-ins, `.*`/`.+` for catch-alls. */
  regex: string | null
  optional: boolean
  /** Catch-all only: whether the empty rest matches (`.*`). */
  allowEmpty: boolean
}

export type Segment = StaticSegment | ParamSegment

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
// RFC 3986 pchar minus '%' (handled separately) — everything else in a literal is percent-encoded.
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/
const UNRESERVED = /^[A-Za-z0-9\-._~]$/

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
  checkSegmentOrder(pattern, segments)
  return segments
}

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

/** A path segment, or a domain label when `domain`. */
function parseSegment(pattern: string, raw: string, domain: boolean): Segment {
  if (raw === '') {
    throw patternError(pattern, `has an empty segment (${domain ? '".."' : '"//"'})`, domain)
  }
  if (!raw.includes('{') && !raw.includes('}')) {
    return { kind: 'static', value: encodeLiteral(pattern, raw, domain) }
  }
  if (!raw.startsWith('{') || !raw.endsWith('}') || braceEnd(raw, 0) !== raw.length - 1) {
    throw new FwError(
      'FW_PATTERN_INVALID',
      `Pattern "${pattern}": ${domain ? 'label' : 'segment'} "${raw}" mixes text and a parameter`,
      {
        hint: domain
          ? 'A parameter must span a whole label; use a regex such as {env:api-[a-z]+} (the value keeps the "api-").'
          : 'A parameter must span a whole segment; use a regex such as {file:[a-z]+\\.txt}.',
      },
    )
  }
  return parseParam(pattern, raw.slice(1, -1), domain)
}

function parseParam(pattern: string, inner: string, domain: boolean): ParamSegment {
  const colon = inner.indexOf(':')
  let name = colon === -1 ? inner : inner.slice(0, colon)
  const spec = colon === -1 ? '' : inner.slice(colon + 1)
  const optional = name.endsWith('?')
  if (optional) name = name.slice(0, -1)
  if (!NAME.test(name)) {
    throw new FwError(
      'FW_PARAM_NAME_INVALID',
      `Pattern "${pattern}": parameter name "${name}" is not a valid identifier`,
      { hint: 'Use letters, digits and "_", starting with a letter or "_".' },
    )
  }
  if (colon !== -1 && spec === '')
    throw patternError(pattern, `parameter "${name}" has an empty type`, domain)
  const base = { kind: 'param' as const, name, optional, allowEmpty: false }
  if (spec === '') return { ...base, type: 'string', regex: null }
  if ((BUILTIN_TYPES as readonly string[]).includes(spec)) {
    const type = spec as BuiltinType
    return { ...base, type, regex: BUILTIN_REGEX[type] }
  }
  if (spec === '.*' || spec === '.+') {
    if (optional) throw patternError(pattern, `catch-all "${name}" cannot also be optional`, domain)
    return { ...base, type: 'catchall', regex: spec, allowEmpty: spec === '.*' }
  }
  if (QUANTIFIED_TYPE.test(spec)) throw quantifiedType(pattern, inner, name, spec, domain)
  if (/^[A-Za-z]+$/.test(spec)) throw typeLikeWord(pattern, inner, name, spec)
  return { ...base, type: 'regex', regex: checkConstraint(pattern, name, spec, domain) }
}

/** A built-in type's name and a quantifier, as a regex: `{n:int?}` is "in" or "int". */
const QUANTIFIED_TYPE = /^(?:int|slug|uuid|hex)[?*+]$/

/**
 * `{n:int?}` reads as the regex `int?`, the text "in" or "int", which no one means: it is an
 * optional int, spelt `{n?:int}`, written the wrong way round. The same for `*`, `+` and the
 * other types. Regexes that merely look alike (`ints?`, `(?:int)?`, `[a-z]+?`) still build.
 */
function quantifiedType(
  pattern: string,
  inner: string,
  name: string,
  spec: string,
  domain: boolean,
): FwError {
  const type = spec.slice(0, -1)
  const [stem, last] = [type.slice(0, -1), type.slice(-1)]
  const text = {
    '?': `"${stem}" or "${type}"`,
    '*': `"${stem}", "${type}", "${type}${last}"...`,
    '+': `"${type}", "${type}${last}"...`,
  }[spec.slice(-1)]
  const meant = spec.endsWith('?')
    ? `an optional ${type}`
    : `${type === 'int' ? 'an' : 'a'} ${type}`
  return new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${pattern}": {${inner}} is the regex ${spec}, matching the text ${text}, not ${meant} parameter`,
    {
      hint: domain
        ? `Write {${name}:${type}}: a domain parameter is one whole label and cannot be optional (register the hosts without that label in a group of their own).`
        : `Write {${name}?:${type}} for an optional ${type} (the "?" goes after the name; the last segment, null when absent), or {${name}:${type}} for a required one.`,
    },
  )
}

// Type names other routers use (and fw's own in another case), as fw spells them.
const TYPE_NAMES: Record<string, BuiltinType> = {
  int: 'int',
  integer: 'int',
  number: 'int',
  numeric: 'int',
  num: 'int',
  digit: 'int',
  digits: 'int',
  uuid: 'uuid',
  guid: 'uuid',
  hex: 'hex',
  hexadecimal: 'hex',
  slug: 'slug',
}

/**
 * `{x:Int}`, `{x:integer}`, `{x:string}`: a constraint of letters alone is a regex matching just
 * that text, which no one means (a fixed segment is written as text): it names a type, fw's in
 * another case or another router's. `{x:(?:json)}` still builds, for whoever does mean it.
 */
function typeLikeWord(pattern: string, inner: string, name: string, spec: string): FwError {
  const type = TYPE_NAMES[spec.toLowerCase()]
  const types = BUILTIN_TYPES.join(', ')
  return new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${pattern}": {${inner}} is the regex ${spec}, matching only the text "${spec}", not a type (fw's types are ${types})`,
    {
      hint:
        (type === undefined
          ? `Write a type or a regex, such as {${name}:slug} or {${name}:[A-Za-z]+}`
          : `Write {${name}:${type}}`) +
        `; for the fixed text "${spec}", write it as text (or {${name}:(?:${spec})} to keep the parameter).`,
    },
  )
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

/** Splits on `separator` except inside `{...}` (regexes may contain separators and braces). */
function splitOutsideBraces(
  pattern: string,
  body: string,
  separator: string,
  domain = false,
): string[] {
  const parts: string[] = []
  let start = 0
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c === '{') {
      const end = braceEnd(body, i)
      if (end === -1) throw patternError(pattern, 'has an unclosed "{"', domain)
      i = end
    } else if (c === '}') {
      throw patternError(pattern, 'has a "}" without its "{"', domain)
    } else if (c === separator) {
      parts.push(body.slice(start, i))
      start = i + 1
    }
  }
  parts.push(body.slice(start))
  return parts
}

/** Index of the `}` closing the `{` at `open`, skipping escapes and character classes; -1 if none. */
function braceEnd(text: string, open: number): number {
  let depth = 0
  let inClass = false
  for (let i = open; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (inClass) inClass = c !== ']'
    else if (c === '[') inClass = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i
  }
  return -1
}

/** Percent-encodes what a client would encode, keeping valid `%XX` escapes (uppercased). */
function encodeLiteral(pattern: string, raw: string, domain: boolean): string {
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string
    if (c === '%') {
      const hex = raw.slice(i + 1, i + 3)
      if (!/^[0-9A-Fa-f]{2}$/.test(hex))
        throw patternError(pattern, `has a malformed escape "%${hex}"`, domain)
      // RFC 3986 normal form, as the matcher normalizes request paths: `%41` is `A`, `%c3` is `%C3`.
      const char = String.fromCharCode(parseInt(hex, 16))
      out += UNRESERVED.test(char) ? char : '%' + hex.toUpperCase()
      i += 2
    } else if (isSurrogate(c.charCodeAt(0))) {
      // A character outside the BMP (an emoji) is two UTF-16 units: encode them together.
      const pair = raw.slice(i, i + 2)
      if (pair.codePointAt(0)! <= 0xffff) throw loneSurrogate(pattern, c, domain)
      out += encodeURIComponent(pair)
      i++
    } else {
      out += PCHAR.test(c) ? c : encodeURIComponent(c)
    }
  }
  return out
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff
}

function loneSurrogate(pattern: string, unit: string, domain: boolean): FwError {
  const code = unit.charCodeAt(0).toString(16).toUpperCase()
  const shown = pattern.replace(LONE_SURROGATE, '\ufffd')
  return new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${shown}" has half a UTF-16 surrogate pair (\\u${code}), which is not a character`,
    {
      hint: domain
        ? 'Write the whole character, or the label in its ASCII (punycode) form.'
        : 'Write the whole character, or its UTF-8 escapes (😀 is %F0%9F%98%80).',
    },
  )
}

function stripParams(pattern: string): string {
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '{') {
      const end = braceEnd(pattern, i)
      if (end === -1) return out
      i = end
    } else {
      out += pattern[i]
    }
  }
  return out
}

function patternError(pattern: string, problem: string, domain = false): FwError {
  return new FwError('FW_PATTERN_INVALID', `Pattern "${pattern}" ${problem}`, {
    hint: domain
      ? 'A domain pattern is a host name whose labels are each text or one parameter, such as {account}.example.com or {id:int}.example.com; no scheme, port or path, no optional or catch-all parameters.'
      : 'See the path parameter syntax in the README: {name}, {name?}, {name:int}, {name?:int}, {name:.*} ...',
  })
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
