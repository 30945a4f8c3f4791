/**
 * One path segment or domain label of a pattern: literal text (encoded by literal.ts) or a
 * parameter in braces, `{name}`, `{name?:int}` or `{name:<regex>}`.
 */
import { FwError } from '../errors.js'
import { checkConstraint } from '../regex-constraint.js'
import { braceEnd } from './braces.js'
import { patternError, quantifiedType, typeLikeWord } from './errors.js'
import { encodeLiteral } from './literal.js'
import {
  BUILTIN_REGEX,
  BUILTIN_TYPES,
  type BuiltinType,
  type ParamSegment,
  type Segment,
} from './types.js'

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A path segment, or a domain label when `domain`. */
export function parseSegment(pattern: string, raw: string, domain: boolean): Segment {
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
