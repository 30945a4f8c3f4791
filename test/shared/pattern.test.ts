import { describe, expect, it } from 'vitest'
import { FwError, type ErrorCode } from '../../src/shared/errors.js'
import {
  BUILTIN_REGEX,
  canMatchSlash,
  paramNames,
  parseHost,
  parsePath,
} from '../../src/shared/pattern.js'

/** Runs `parse` and returns the FwError it throws (fails the test when it does not throw). */
function errorOf(parse: () => unknown): FwError {
  try {
    parse()
  } catch (error) {
    expect(error).toBeInstanceOf(FwError)
    return error as FwError
  }
  throw new Error('expected the pattern to be rejected, but it parsed')
}

function expectPathError(pattern: string, code: ErrorCode, problem?: RegExp): FwError {
  const error = errorOf(() => parsePath(pattern))
  expect(error.code).toBe(code)
  expect(error.message).toContain(`"${pattern}"`)
  if (problem) expect(error.message).toMatch(problem)
  expect(error.hint).toBeTruthy()
  return error
}

function expectHostError(pattern: string, code: ErrorCode, problem?: RegExp): FwError {
  const error = errorOf(() => parseHost(pattern))
  expect(error.code).toBe(code)
  expect(error.message).toContain(`"${pattern}"`)
  if (problem) expect(error.message).toMatch(problem)
  return error
}

const param = (
  name: string,
  type: string,
  regex: string | null,
  extra: { optional?: boolean; allowEmpty?: boolean } = {},
) => ({
  kind: 'param',
  name,
  type,
  regex,
  optional: extra.optional ?? false,
  allowEmpty: extra.allowEmpty ?? false,
})
const text = (value: string) => ({ kind: 'static', value })

describe('parsePath: parameter forms', () => {
  it('parses a plain {name} as a required string parameter', () => {
    expect(parsePath('/users/{id}')).toEqual([text('users'), param('id', 'string', null)])
  })

  it('parses {name?} as an optional string parameter', () => {
    expect(parsePath('/users/{name?}')).toEqual([
      text('users'),
      param('name', 'string', null, { optional: true }),
    ])
  })

  it('parses {name?:int} as an optional integer parameter', () => {
    expect(parsePath('/page/{n?:int}')).toEqual([
      text('page'),
      param('n', 'int', BUILTIN_REGEX.int, { optional: true }),
    ])
  })

  it('parses each built-in type with its regex', () => {
    expect(parsePath('/a/{id:int}')[1]).toEqual(param('id', 'int', '[0-9]{1,15}'))
    expect(parsePath('/a/{s:slug}')[1]).toEqual(param('s', 'slug', BUILTIN_REGEX.slug))
    expect(parsePath('/a/{u:uuid}')[1]).toEqual(param('u', 'uuid', BUILTIN_REGEX.uuid))
    expect(parsePath('/a/{h:hex}')[1]).toEqual(param('h', 'hex', BUILTIN_REGEX.hex))
  })

  it('keeps braces inside a custom regex such as {code:[A-Z]{3}}', () => {
    expect(parsePath('/demo/code/{code:[A-Z]{3}}')).toEqual([
      text('demo'),
      text('code'),
      param('code', 'regex', '[A-Z]{3}'),
    ])
  })

  it('keeps a "/" inside a regex parameter instead of splitting on it', () => {
    expect(parsePath('/x/{p:[a/]+}')).toEqual([text('x'), param('p', 'regex', '[a/]+')])
  })

  it('parses {path:.*} as a catch-all that accepts an empty rest', () => {
    expect(parsePath('/files/{path:.*}')).toEqual([
      text('files'),
      param('path', 'catchall', '.*', { allowEmpty: true }),
    ])
  })

  it('parses {path:.+} as a catch-all that needs a non-empty rest', () => {
    expect(parsePath('/files/{path:.+}')).toEqual([
      text('files'),
      param('path', 'catchall', '.+', { allowEmpty: false }),
    ])
  })

  it('lists parameter names in order', () => {
    expect(paramNames(parsePath('/u/{user}/posts/{post:int}/{tab?}'))).toEqual([
      'user',
      'post',
      'tab',
    ])
  })
})

describe('parsePath: slashes and literals', () => {
  it('gives no segments for "/"', () => {
    expect(parsePath('/')).toEqual([])
  })

  it('ignores one trailing slash', () => {
    expect(parsePath('/users/')).toEqual(parsePath('/users'))
    expect(parsePath('/users/{id}/')).toEqual(parsePath('/users/{id}'))
  })

  it('keeps plain ASCII literals and RFC 3986 sub-delimiters as they are', () => {
    expect(parsePath("/a-b_c.d~e/!$&'()*+,;=:@")).toEqual([
      text('a-b_c.d~e'),
      text("!$&'()*+,;=:@"),
    ])
  })

  it('percent-encodes spaces and non-ASCII characters in literals', () => {
    expect(parsePath('/hello world/café')).toEqual([text('hello%20world'), text('caf%C3%A9')])
  })

  it('keeps valid %xx escapes in literals, uppercased', () => {
    expect(parsePath('/a%2fb/%c3%a9')).toEqual([text('a%2Fb'), text('%C3%A9')])
  })

  it('rejects a malformed %-escape in a literal', () => {
    expectPathError('/a%zz', 'FW_PATTERN_INVALID', /malformed escape/)
  })
})

describe('parsePath: errors', () => {
  it('rejects a segment that mixes text and a parameter', () => {
    const error = expectPathError(
      '/files/{name}.txt',
      'FW_PATTERN_INVALID',
      /mixes text and a parameter/,
    )
    expect(error.message).toContain('{name}.txt')
    expect(error.hint).toMatch(/whole segment/)
  })

  it('rejects text before a parameter in one segment', () => {
    expectPathError('/files/v{n:int}', 'FW_PATTERN_INVALID', /mixes text and a parameter/)
  })

  it('rejects an empty segment inside the path', () => {
    expectPathError('/a//b', 'FW_PATTERN_INVALID', /empty segment/)
  })

  it('rejects "//" as a path with an empty segment', () => {
    expectPathError('//', 'FW_PATTERN_INVALID', /empty segment/)
  })

  it('rejects a path without a leading slash', () => {
    expectPathError('users/{id}', 'FW_PATTERN_INVALID', /must start with "\/"/)
  })

  it('rejects the empty path', () => {
    expectPathError('', 'FW_PATTERN_INVALID', /must start with "\/"/)
  })

  it('rejects a "?" or "#" in the path, pointing at urlFor for query values', () => {
    expectPathError('/search?q=1', 'FW_PATTERN_INVALID', /"\?".*urlFor/)
    expectPathError('/page#top', 'FW_PATTERN_INVALID', /"#"/)
  })

  it('accepts "?" inside a parameter (the optional marker and regex quantifiers)', () => {
    expect(parsePath('/a/{b?}')).toHaveLength(2)
    expect(parsePath('/a/{b:x?y}')[1]).toEqual(param('b', 'regex', 'x?y'))
  })

  it('rejects an unclosed brace', () => {
    expectPathError('/users/{id', 'FW_PATTERN_INVALID', /unclosed "\{"/)
  })

  it('rejects a stray closing brace', () => {
    expectPathError('/users/id}', 'FW_PATTERN_INVALID', /"\}" without its "\{"/)
  })

  it('rejects parameter names that are not identifiers', () => {
    expectPathError('/u/{1id}', 'FW_PARAM_NAME_INVALID', /"1id" is not a valid identifier/)
    expectPathError('/u/{user-id}', 'FW_PARAM_NAME_INVALID', /"user-id"/)
    expectPathError('/u/{}', 'FW_PARAM_NAME_INVALID')
  })

  it('rejects a parameter with an empty type after the colon', () => {
    expectPathError('/u/{id:}', 'FW_PATTERN_INVALID', /"id" has an empty type/)
  })

  it('rejects a parameter name used twice', () => {
    expectPathError('/u/{id}/posts/{id:int}', 'FW_PARAM_DUPLICATE', /"id" is used twice/)
  })

  it('rejects an optional parameter followed by a required parameter', () => {
    expectPathError('/a/{x?}/{y}', 'FW_OPTIONAL_NOT_TRAILING', /required "y" follows an optional/)
  })

  it('rejects an optional parameter followed by a literal segment', () => {
    expectPathError('/a/{x?}/edit', 'FW_OPTIONAL_NOT_TRAILING', /followed by "edit"/)
  })

  it('accepts several trailing optional parameters', () => {
    expect(paramNames(parsePath('/a/{x?}/{y?}'))).toEqual(['x', 'y'])
  })

  it('rejects a catch-all that is not the last segment', () => {
    expectPathError(
      '/files/{path:.*}/edit',
      'FW_CATCHALL_NOT_LAST_SEGMENT',
      /"path" must be the last/,
    )
  })

  it('rejects an optional catch-all', () => {
    expectPathError('/files/{path?:.*}', 'FW_PATTERN_INVALID', /cannot also be optional/)
  })

  it('rejects a regex that does not compile', () => {
    const error = expectPathError(
      '/a/{x:(abc}',
      'FW_REGEX_INVALID',
      /regex of "x" does not compile/,
    )
    expect(error.hint).toMatch(/regex syntax/)
  })

  it('rejects a regex that can backtrack catastrophically', () => {
    const error = expectPathError('/a/{x:(a+)+}', 'FW_REGEX_UNSAFE', /\(a\+\)\+.*backtrack/)
    expect(error.hint).toMatch(/nested quantifiers/)
  })
})

describe('parseHost', () => {
  it('parses a domain pattern with a parameter label', () => {
    expect(parseHost('{account}.example.com')).toEqual([
      param('account', 'string', null),
      text('example'),
      text('com'),
    ])
  })

  it('lowercases literal labels (hosts are case-insensitive)', () => {
    expect(parseHost('API.Example.COM')).toEqual([text('api'), text('example'), text('com')])
  })

  it('accepts a typed label such as {n:int} (the ":" of a parameter is not a port)', () => {
    expect(parseHost('{n:int}.example.com')).toEqual([
      param('n', 'int', BUILTIN_REGEX.int),
      text('example'),
      text('com'),
    ])
  })

  it('accepts a regex label, keeping a "." inside the regex', () => {
    expect(parseHost('{r:[a-z]+(?:\\.x)?}.com')).toEqual([
      param('r', 'regex', '[a-z]+(?:\\.x)?'),
      text('com'),
    ])
  })

  it('rejects a regex label no lowercased label matches: one that needs a "." or capitals', () => {
    const dotted = expectHostError(
      '{r:[a-z]+\\.x}.com',
      'FW_REGEX_NEVER_MATCHES',
      /can never match a host label/,
    )
    expect(dotted.hint).toMatch(/^A domain parameter fills one label, which holds no "\."/)
    expectHostError('{r:[A-Z]{3}}.com', 'FW_REGEX_NEVER_MATCHES', /matched lowercased/)
  })

  it('rejects an empty host, a scheme, a port or a path', () => {
    expectHostError('', 'FW_PATTERN_INVALID', /host name without scheme, port or path/)
    expectHostError('https://example.com', 'FW_PATTERN_INVALID')
    expectHostError('example.com:8080', 'FW_PATTERN_INVALID')
    expectHostError('example.com/api', 'FW_PATTERN_INVALID')
  })

  it('rejects an optional label', () => {
    expectHostError('{a?}.example.com', 'FW_PATTERN_INVALID', /optional or catch-all/)
  })

  it('rejects a catch-all label, saying why', () => {
    expectHostError('{a:.*}.example.com', 'FW_PATTERN_INVALID', /optional or catch-all/)
  })

  it('rejects an empty label', () => {
    expectHostError('api..example.com', 'FW_PATTERN_INVALID', /empty segment/)
  })

  it('rejects a label that mixes text and a parameter', () => {
    expectHostError('api-{env}.example.com', 'FW_PATTERN_INVALID', /mixes text and a parameter/)
  })

  it('rejects a parameter name used twice', () => {
    expectHostError('{a}.{a}.example.com', 'FW_PARAM_DUPLICATE', /"a" is used twice/)
  })
})

describe('canMatchSlash', () => {
  it.each(['.', '[^a]', '\\S', '[!-~]', '\\W', 'a/b', '[a/]', '.+'])(
    'is true for %s, which can match "/"',
    (source) => {
      expect(canMatchSlash(source)).toBe(true)
    },
  )

  it.each(['[A-Z]{3}', '[a-z0-9-]+', '\\d+', 'abc', '[^/]+', '[a-z]+\\.txt'])(
    'is false for %s, which cannot match "/"',
    (source) => {
      expect(canMatchSlash(source)).toBe(false)
    },
  )
})

describe('parsePath: regexes that backtrack', () => {
  // Regression: these built (only nested quantifiers were caught), and one request could block
  // the server for seconds: '/a/' + 'a'.repeat(28) + '!' took 13 s against (a|a)*.
  it.each(['(a|a)*', '(a|aa)+', 'a*a*a*b', '\\w+\\d+'])('rejects {x:%s}', (regex) => {
    const error = expectPathError(`/a/{x:${regex}}`, 'FW_REGEX_UNSAFE', /backtrack/)
    expect(error.message).toContain(`(${regex})`)
    expect(error.message).not.toContain('\n')
  })

  it('keeps the README examples and a written-out slug', () => {
    expect(parsePath('/q/{q:[a-z]+%20[a-z]+}')[1]).toEqual(param('q', 'regex', '[a-z]+%20[a-z]+'))
    expect(parsePath('/c/{code:[A-Z]{3}}')[1]).toEqual(param('code', 'regex', '[A-Z]{3}'))
    expect(parsePath('/s/{s:[a-z0-9]+(?:-[a-z0-9]+)*}')[1]).toMatchObject({ type: 'regex' })
  })

  // Regression: safe-regex2 cannot read lookbehind and called it unsafe.
  it('accepts a lookbehind', () => {
    expect(parsePath('/a/{x:(?<=/)ab}')[1]).toEqual(param('x', 'regex', '(?<=/)ab'))
  })
})

describe('parsePath: segment anchors', () => {
  // Regression: `^`/`$` were tested against the whole path: `{x:^ab$}` was a dead route.
  it('drops a leading "^" and a trailing "$" of each top-level alternative', () => {
    expect(parsePath('/a/{x:^ab$}')[1]).toEqual(param('x', 'regex', 'ab'))
    expect(parsePath('/a/{x:^a|b$}')[1]).toEqual(param('x', 'regex', 'a|b'))
    expect(parsePath('/a/{x:(?:a|b)$}')[1]).toEqual(param('x', 'regex', '(?:a|b)'))
  })

  it('keeps an escaped "$" at the end', () => {
    expect(parsePath('/a/{x:a\\$}')[1]).toEqual(param('x', 'regex', 'a\\$'))
    expect(parsePath('/a/{x:a\\\\$}')[1]).toEqual(param('x', 'regex', 'a\\\\'))
  })

  it('rejects a regex that needs a "/", pointing at a catch-all', () => {
    const error = expectPathError('/a/{x:a/b}', 'FW_REGEX_NEVER_MATCHES', /never match a segment/)
    expect(error.hint).toMatch(/catch-all/)
    expect(error.hint).toContain('{x:.*}')
  })

  it('rejects a "^" that can only match at the start of the path', () => {
    expectPathError('/a/{x:a^b}', 'FW_REGEX_NEVER_MATCHES', /"\^"/)
    expectPathError('/a/{x:(^a)}', 'FW_REGEX_NEVER_MATCHES', /"\^"/)
  })

  it('rejects a regex that matches only the empty string', () => {
    expectPathError('/a/{x:^$}', 'FW_REGEX_NEVER_MATCHES')
  })
})

describe('parsePath: characters outside the BMP', () => {
  // Regression: encodeURIComponent on half a surrogate pair threw "URI malformed" (a crash
  // reported as a bug in fw, with no file:line).
  it('percent-encodes an emoji in a literal as its UTF-8 bytes', () => {
    expect(parsePath('/z/😀')).toEqual([text('z'), text('%F0%9F%98%80')])
    expect(parsePath('/z/a😀b𝄞')).toEqual([text('z'), text('a%F0%9F%98%80b%F0%9D%84%9E')])
  })

  it('rejects half a surrogate pair with a pattern error', () => {
    const error = errorOf(() => parsePath('/z/\ud83dx'))
    expect(error.code).toBe('FW_PATTERN_INVALID')
    expect(error.message).toMatch(/surrogate/)
    expect(error.message).toContain('\\uD83D')
    expect(errorOf(() => parsePath('/z/\ude00')).code).toBe('FW_PATTERN_INVALID')
  })
})
