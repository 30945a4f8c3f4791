/**
 * The build's checks of a parameter's custom regex (`{code:[A-Z]{3}}`), and the source the matcher
 * uses for it. Build time only: parsePath calls it, the runtime never imports it.
 */
import { FwError } from './errors.js'
import {
  backtrackingRisk,
  canConsume,
  canMatchSegment,
  NOT_SLASH,
  SEGMENT_CHARS,
  type BacktrackingRisk,
} from './regex-safety.js'
import { topLevelAlternatives, unicodeModeEscape, type CharSet } from './regex-syntax.js'

const SLASH = 47

// Regex sources already checked, and what they became: route tables repeat a few constraints.
// A domain's are keyed apart: they are checked for more.
const checkedRegexes = new Map<string, string>()

// What a host label holds as match() sees it, the Host lowercased: a-z, 0-9, '-' and '_'.
const HOST_LABEL: CharSet = [0x2d, 0x2d, 0x30, 0x39, 0x5f, 0x5f, 0x61, 0x7a]

/**
 * Checks the custom regex `spec` of parameter `name` in `pattern` (a path, or a domain when
 * `domain`): it must compile, mean the same without the `u` flag, be unable to backtrack
 * catastrophically (regex-safety.ts) and be able to match a segment. Returns the source to match,
 * without the segment anchors it implies.
 * @example
 * checkConstraint('/a/{x:^ab$}', 'x', '^ab$') // 'ab'
 */
export function checkConstraint(
  pattern: string,
  name: string,
  spec: string,
  domain = false,
): string {
  if (domain) checkNoGroupReferences(pattern, name, spec)
  const key = domain ? `domain:${spec}` : spec
  const known = checkedRegexes.get(key)
  if (known !== undefined) return known
  try {
    new RegExp(spec)
  } catch (error) {
    throw new FwError(
      'FW_REGEX_INVALID',
      `Pattern "${pattern}": the regex of "${name}" does not compile: ${(error as Error).message}`,
      { hint: 'Check the regex syntax; it is a JavaScript regular expression.' },
    )
  }
  checkNoUnicodeModeEscape(pattern, name, spec, domain)
  const source = stripSegmentAnchors(spec)
  const risk = backtrackingRisk(source)
  if (risk !== null) {
    const [problem, hint] = RISKS[risk]
    throw new FwError(
      'FW_REGEX_UNSAFE',
      `Pattern "${pattern}": the regex of "${name}" (${spec}) ${problem}`,
      { hint },
    )
  }
  checkMatchesSegment(pattern, name, spec, source)
  if (domain) checkMatchesLabel(pattern, name, spec, source)
  checkedRegexes.set(key, source)
  return source
}

/**
 * Rejects a backreference (`\1`, `\k<x>`) or a named group in a domain parameter's regex: a
 * domain's labels are matched by one regex of the whole Host, where the numbering of groups
 * shifts under `\1` (it then never matches) and a name can be taken twice (the cache fails to load).
 */
function checkNoGroupReferences(pattern: string, name: string, spec: string): void {
  let inClass = false
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]
    if (c === '\\') {
      const next = spec[++i] ?? ''
      if (!inClass && (/[1-9]/.test(next) || next === 'k'))
        throw groupReference(pattern, name, spec, 'a backreference')
    } else if (c === '[') inClass = true
    else if (c === ']') inClass = false
    else if (!inClass && spec.startsWith('(?<', i) && !/[=!]/.test(spec[i + 3] ?? ''))
      throw groupReference(pattern, name, spec, 'a named group')
  }
}

function groupReference(pattern: string, name: string, spec: string, what: string): FwError {
  return new FwError(
    'FW_REGEX_INVALID',
    `Pattern "${pattern}": the regex of "${name}" (${spec}) has ${what}, which a domain parameter cannot use`,
    { hint: 'Write it without group names or backreferences: (?:...) groups and classes work.' },
  )
}

const UNICODE_MEANING: Readonly<Record<string, string>> = {
  p: 'a Unicode property',
  P: 'a negated Unicode property',
  u: 'a code point',
}

/**
 * Rejects `\p{...}`, `\P{...}` and `\u{...}`: constraints are compiled without the `u` flag (and
 * tested against the percent-encoded path, or the ASCII Host), where `\p{L}` silently matches the
 * text "p{L}".
 */
function checkNoUnicodeModeEscape(
  pattern: string,
  name: string,
  spec: string,
  domain: boolean,
): void {
  const escape = unicodeModeEscape(spec)
  if (escape === null) return
  const letter = escape[1]!
  throw new FwError(
    'FW_PATTERN_INVALID',
    `Pattern "${pattern}": the regex of "${name}" uses ${escape}, which needs the "u" flag: constraints are compiled without it, where it matches a plain "${letter}", not ${UNICODE_MEANING[letter]}`,
    {
      hint: domain
        ? `A domain constraint is tested against the Host in its ASCII form, where a non-ASCII label arrives as punycode (café is xn--caf-dma): match that ({${name}:[a-z0-9-]+}), or take {${name}} and check the value in the handler.`
        : `A constraint is tested against the percent-encoded path, where a non-ASCII character arrives as %XX escapes (é is %C3%A9): match the escapes ({${name}:(?:[a-z]|%[0-9A-F]{2})+}), or take any segment ({${name}:[^/]+}) and check the decoded value in the handler.`,
    },
  )
}

const RISKS: Readonly<Record<BacktrackingRisk, readonly [problem: string, hint: string]>> = {
  exponential: [
    'can backtrack catastrophically: a repeated part can match the same text in more than one way',
    'Remove nested quantifiers such as (a+)+ and overlapping alternatives under * or + such as (a|aa)+: one level of repetition, whose alternatives start differently, suffices.',
  ],
  polynomial: [
    'can backtrack catastrophically: two repeats in a row can match the same characters (as in a*a* or \\w+\\d+), which takes seconds on a long path',
    'Give adjacent repeats different characters ([a-z]+[0-9]+) or a literal between them ([a-z]+-[a-z]+).',
  ],
  'too-complex': [
    'is too complex to prove that it cannot backtrack catastrophically',
    'Simplify the regex (fewer or smaller {n,m} counts), or take a plain {name} and check the value in the handler.',
  ],
}

/**
 * A constraint is matched against its whole segment, so `^` at the start and `$` at the end of a
 * top-level alternative add nothing. Kept, they would be tested against the whole path (regexes
 * with anchors are tested in place), where `^` never matches: `{x:^ab$}` was a dead route.
 */
function stripSegmentAnchors(source: string): string {
  return topLevelAlternatives(source)
    .map((alternative) => {
      const body = alternative.startsWith('^') ? alternative.slice(1) : alternative
      return /(?:^|[^\\])(?:\\\\)*\$$/.test(body) ? body.slice(0, -1) : body
    })
    .join('|')
}

/**
 * Rejects a domain parameter's constraint that no host label, as routing sees it (lowercased),
 * can satisfy: `{code:[A-Z]{3}}.example.com` built, and its route never matched.
 */
function checkMatchesLabel(pattern: string, name: string, spec: string, source: string): void {
  if (canMatchSegment(source, false, HOST_LABEL)) return
  throw new FwError(
    'FW_REGEX_NEVER_MATCHES',
    `Pattern "${pattern}": the regex of "${name}" (${spec}) can never match a host label: the Host is matched lowercased, and a label holds only a-z, 0-9, "-" and "_"`,
    {
      hint:
        spec.toLowerCase() !== spec
          ? `Host names are case-insensitive: write the constraint in lowercase letters (${spec.toLowerCase()}).`
          : `A domain parameter fills one label, which holds no ".": match that label alone, and write the labels after it into the pattern ({${name}}.example.com).`,
    },
  )
}

/** Rejects a constraint no segment can satisfy: its route could never match. */
function checkMatchesSegment(pattern: string, name: string, spec: string, source: string): void {
  const several = `To take several segments, make the last segment a catch-all ({${name}:.*} or {${name}:.+}) and check the value in the handler; "^" and "$" belong only at the ends, where they are implied.`
  let problem: readonly [string, string] | null = null
  if (!canMatchSegment(source, false, NOT_SLASH)) {
    problem = [
      'can never match a segment: it needs a "/" (or matches only ""), and a parameter spans one segment',
      several,
    ]
  } else if (!canMatchSegment(source, false)) {
    problem = [
      'can never match a segment: it needs a character a request path never holds as such (a space, a control or non-ASCII character arrives %-encoded: é is %C3%A9)',
      `Write the escapes into the regex ({${name}:caf%C3%A9}, %20 for a space), or take {${name}} and check the decoded value in the handler.`,
    ]
  } else if (!canMatchSegment(source, false, SEGMENT_CHARS, true)) {
    problem = [
      'can never match a segment: its %-escapes are not in the form a constraint sees them in (two uppercase hex digits; letters, digits and "-._~" decoded: %c3%a9 arrives as %C3%A9, %41 as A)',
      `Write each escape in uppercase and unreserved characters as themselves (caf%C3%A9, a-b), or take {${name}} and check the decoded value in the handler.`,
    ]
  } else if (!canConsume(source, SLASH) && !canMatchSegment(source, true, SEGMENT_CHARS, true)) {
    problem = [
      'can never match a segment: its "^" is tested against the whole path, where it only matches before the first "/"',
      several,
    ]
  }
  if (problem === null) return
  throw new FwError(
    'FW_REGEX_NEVER_MATCHES',
    `Pattern "${pattern}": the regex of "${name}" (${spec}) ${problem[0]}`,
    { hint: problem[1] },
  )
}
