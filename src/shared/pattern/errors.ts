/**
 * The errors a pattern is refused with: the general FW_PATTERN_INVALID with the grammar as its
 * hint, and the two mistaken types that would otherwise build as regexes matching fixed text.
 */
import { FwError } from '../errors.js'
import { BUILTIN_TYPES, type BuiltinType } from './types.js'

/**
 * `{n:int?}` reads as the regex `int?`, the text "in" or "int", which no one means: it is an
 * optional int, spelt `{n?:int}`, written the wrong way round. The same for `*`, `+` and the
 * other types. Regexes that merely look alike (`ints?`, `(?:int)?`, `[a-z]+?`) still build.
 */
export function quantifiedType(
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
export function typeLikeWord(pattern: string, inner: string, name: string, spec: string): FwError {
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

export function patternError(pattern: string, problem: string, domain = false): FwError {
  return new FwError('FW_PATTERN_INVALID', `Pattern "${pattern}" ${problem}`, {
    hint: domain
      ? 'A domain pattern is a host name whose labels are each text or one parameter, such as {account}.example.com or {id:int}.example.com; no scheme, port or path, no optional or catch-all parameters.'
      : 'See the path parameter syntax in the README: {name}, {name?}, {name:int}, {name?:int}, {name:.*} ...',
  })
}
