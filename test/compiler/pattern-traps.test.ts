/**
 * Patterns that built but silently meant something else, now build errors printed as one line
 * naming the pattern, and a hint saying what to write instead:
 *
 * - `{n:int?}` was read as the regex `int?` (the text "in" or "int"), not an optional int, which
 *   is spelt `{n?:int}`; the same for `*`, `+` and the other built-in types.
 * - `\p{L}`, `\P{...}` and `\u{...}` need the `u` flag; constraints are compiled without it, where
 *   `\p{L}` is the text "p{L}" (and constraints see the percent-encoded path anyway).
 * - A bad domain pattern got a hint about path parameter syntax.
 *
 * Errors go through the compiler (src) and are printed as the CLI prints them.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { printError } from '../../src/cli/output.js'
import { analyzeRoutes } from '../../src/compiler/analyze.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError } from '../../src/shared/errors.js'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

const ANSI = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g')

/**
 * What `fw route:cache build` prints for the routes: [error line, hint line]. Fails the test
 * when the routes build.
 */
function printed(register: (r: Registrar) => void): [error: string, hint: string] {
  const registrar = collectRoutes(register)
  let caught: unknown
  try {
    analyzeRoutes(registrar.routes, new Set(registrar.aliases.keys()))
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected the routes to be rejected').toBeInstanceOf(FwError)
  const lines: string[] = []
  printError({ out: () => {}, err: (text) => lines.push(text.replace(ANSI, '')) }, caught, false)
  expect(lines).toHaveLength(2)
  return [lines[0]!, lines[1]!]
}

const path = (pattern: string) => (r: Registrar) => r.get(pattern, noop)
const domain = (pattern: string) => (r: Registrar) =>
  r.group({ domain: pattern }, (r) => r.get('/a', noop))

describe('a built-in type followed by a quantifier ({n:int?})', () => {
  it.each([
    ['/p/{n:int?}', '"in" or "int", not an optional int parameter', '{n?:int}', '{n:int}'],
    ['/p/{n:slug?}', '"slu" or "slug", not an optional slug parameter', '{n?:slug}', '{n:slug}'],
    ['/p/{n:uuid?}', '"uui" or "uuid", not an optional uuid parameter', '{n?:uuid}', '{n:uuid}'],
    ['/p/{n:hex?}', '"he" or "hex", not an optional hex parameter', '{n?:hex}', '{n:hex}'],
    ['/p/{n:int+}', '"int", "intt"..., not an int parameter', '{n?:int}', '{n:int}'],
    ['/p/{n:slug*}', '"slu", "slug", "slugg"..., not a slug parameter', '{n?:slug}', '{n:slug}'],
  ])('rejects %s, naming the optional form in the hint', (pattern, meaning, optional, required) => {
    const [error, hint] = printed(path(pattern))
    const spec = pattern.slice(3)
    expect(error).toMatch(/^error Pattern "/)
    expect(error).toContain(
      `Pattern "${pattern}": ${spec} is the regex ${spec.slice(3, -1)}, matching the text ${meaning} [FW_PATTERN_INVALID]`,
    )
    expect(hint).toContain(`hint: Write ${optional} for an optional `)
    expect(hint).toContain(`or ${required} for a required one.`)
  })

  it('rejects {n?:int?}, quoting it as written', () => {
    const [error, hint] = printed(path('/p/{n?:int?}'))
    expect(error).toContain('Pattern "/p/{n?:int?}": {n?:int?} is the regex int?')
    expect(error).toMatch(/\[FW_PATTERN_INVALID\]$/)
    expect(hint).toContain('Write {n?:int} for an optional int')
  })

  it('rejects {n:int?} in a domain, saying domain parameters cannot be optional', () => {
    const [error, hint] = printed(domain('{n:int?}.example.com'))
    expect(error).toContain('Pattern "{n:int?}.example.com": {n:int?} is the regex int?')
    expect(error).toMatch(/\[FW_PATTERN_INVALID\]$/)
    expect(hint).toContain(
      'Write {n:int}: a domain parameter is one whole label and cannot be optional',
    )
  })

  it('builds what the hint suggests: {n?:int} is an optional int', async () => {
    const m = await compileRoutes((r) => r.get('/p/{n?:int}', noop, 'p'))
    expect(m.match('GET', '/p/7')).toMatchObject({ route: { name: 'p' }, params: { n: 7 } })
    expect(m.match('GET', '/p')).toMatchObject({ route: { name: 'p' }, params: { n: null } })
    expect(m.match('GET', '/p/int')).toEqual({ status: 404 })
  })
})

describe('regex escapes that need the u flag', () => {
  it.each([
    ['/w/{w:\\p{L}+}', '\\p{L}', 'p', 'a Unicode property'],
    ['/w/{w:[\\p{L}-]+}', '\\p{L}', 'p', 'a Unicode property'],
    ['/w/{w:[a-z]\\P{Lu}}', '\\P{Lu}', 'P', 'a negated Unicode property'],
    ['/w/{w:\\u{1F600}}', '\\u{1F600}', 'u', 'a code point'],
    ['/w/{w:[a\\u{e9}]+}', '\\u{e9}', 'u', 'a code point'],
    ['/w/{w:a\\u{2}}', '\\u{2}', 'u', 'a code point'],
    ['/w/{w:\\\\\\p{L}}', '\\p{L}', 'p', 'a Unicode property'],
  ])('rejects %s, pointing at the percent-encoded path', (pattern, escape, letter, meaning) => {
    const [error, hint] = printed(path(pattern))
    expect(error).toMatch(/^error Pattern "/)
    expect(error).toContain(
      `Pattern "${pattern}": the regex of "w" uses ${escape}, which needs the "u" flag: constraints are compiled without it, where it matches a plain "${letter}", not ${meaning} [FW_PATTERN_INVALID]`,
    )
    expect(hint).toBe(
      '  hint: A constraint is tested against the percent-encoded path, where a non-ASCII character arrives as %XX escapes (é is %C3%A9): match the escapes ({w:(?:[a-z]|%[0-9A-F]{2})+}), or take any segment ({w:[^/]+}) and check the decoded value in the handler.',
    )
  })

  it('rejects \\p{L} in a domain, pointing at the punycode Host', () => {
    const [error, hint] = printed(domain('{w:\\p{L}+}.example.com'))
    expect(error).toContain('Pattern "{w:\\p{L}+}.example.com": the regex of "w" uses \\p{L}')
    expect(error).toMatch(/\[FW_PATTERN_INVALID\]$/)
    expect(hint).toContain('punycode (café is xn--caf-dma)')
  })

  it('builds what the hint suggests, which matches a non-ASCII segment', async () => {
    const m = await compileRoutes((r) => {
      r.get('/w/{w:(?:[a-z]|%[0-9A-F]{2})+}', noop, 'escapes')
      r.get('/any/{w:[^/]+}', noop, 'any')
    })
    expect(m.match('GET', '/w/caf%C3%A9')).toMatchObject({
      route: { name: 'escapes' },
      params: { w: 'café' },
    })
    expect(m.match('GET', '/any/caf%c3%a9')).toMatchObject({ params: { w: 'café' } })
  })
})

describe('look-alikes that are meant as regexes still build', () => {
  it.each([
    ['/x/{x:[a-z]+?}', '/x/abc', 'abc'],
    ['/x/{x:v\\d+}', '/x/v12', 'v12'],
    ['/x/{x:(?:int)?}', '/x/int', 'int'],
    ['/x/{x:ints?}', '/x/int', 'int'],
    ['/x/{x:p{2}}', '/x/pp', 'pp'],
    ['/x/{x:\\u0041+}', '/x/AA', 'AA'],
    ['/x/{x:(?<c>[a-z])\\k<c>}', '/x/aa', 'aa'],
    ['/x/{x:(?<=/)ab}', '/x/ab', 'ab'],
    ['/x/{x:INT?}', '/x/IN', 'IN'],
  ])('%s matches %s', async (pattern, request, value) => {
    const m = await compileRoutes((r) => r.get(pattern, noop, 'x'))
    expect(m.match('GET', request)).toMatchObject({ route: { name: 'x' }, params: { x: value } })
  })

  it.each(['/x/{x:\\\\p}', '/x/{x:\\\\p{L}}', '/x/{x:[\\\\p{L}]+}', '/x/{x:\\\\u{1F600}}'])(
    '%s builds: an escaped backslash, then the text',
    async (pattern) => {
      const m = await compileRoutes((r) => r.get(pattern, noop, 'x'))
      expect(m.routes.map((route) => route.path)).toEqual([pattern])
    },
  )
})

describe('a bad domain pattern', () => {
  it.each([
    [
      'example.com/x',
      'is not a domain: a domain pattern is a host name without scheme, port or path',
    ],
    ['api..example.com', 'has an empty segment ("..")'],
    [
      '{a?}.example.com',
      'has an optional or catch-all parameter ("a"), which a domain cannot have',
    ],
    [
      '{a:.*}.example.com',
      'has an optional or catch-all parameter ("a"), which a domain cannot have',
    ],
    ['{a.example.com', 'has an unclosed "{"'],
  ])('%s gets a hint about domains, not path parameters', (pattern, problem) => {
    const [error, hint] = printed(domain(pattern))
    expect(error).toContain(`Pattern "${pattern}" ${problem} [FW_PATTERN_INVALID]`)
    expect(hint).toBe(
      '  hint: A domain pattern is a host name whose labels are each text or one parameter, such as {account}.example.com or {id:int}.example.com; no scheme, port or path, no optional or catch-all parameters.',
    )
  })

  it('says "label" for a label that mixes text and a parameter', () => {
    const [error, hint] = printed(domain('api-{env}.example.com'))
    expect(error).toContain(
      'Pattern "api-{env}.example.com": label "api-{env}" mixes text and a parameter [FW_PATTERN_INVALID]',
    )
    expect(hint).toBe(
      '  hint: A parameter must span a whole label; use a regex such as {env:api-[a-z]+} (the value keeps the "api-").',
    )
  })
})

describe('a constraint of letters alone ({x:Int}, {x:integer})', () => {
  it.each([
    ['/p/{n:Int}', 'Int', 'Write {n:int}'],
    ['/p/{n:INT}', 'INT', 'Write {n:int}'],
    ['/p/{n:integer}', 'integer', 'Write {n:int}'],
    ['/p/{n:number}', 'number', 'Write {n:int}'],
    ['/p/{n:Uuid}', 'Uuid', 'Write {n:uuid}'],
    ['/p/{n:guid}', 'guid', 'Write {n:uuid}'],
    ['/p/{n:Slug}', 'Slug', 'Write {n:slug}'],
    ['/p/{n:string}', 'string', 'Write a type or a regex, such as {n:slug} or {n:[A-Za-z]+}'],
    ['/p/{n?:Int}', 'Int', 'Write {n:int}'],
  ])('rejects %s, naming the type meant', (pattern, word, advice) => {
    const [error, hint] = printed(path(pattern))
    const inner = pattern.slice(4, -1)
    expect(error).toContain(
      `Pattern "${pattern}": {${inner}} is the regex ${word}, matching only the text "${word}", not a type (fw's types are int, uuid, hex, slug) [FW_PATTERN_INVALID]`,
    )
    expect(hint).toBe(
      `  hint: ${advice}; for the fixed text "${word}", write it as text (or {n:(?:${word})} to keep the parameter).`,
    )
  })

  it('rejects {id:Int} in a domain too', () => {
    const [error, hint] = printed(domain('{id:Int}.example.com'))
    expect(error).toContain('Pattern "{id:Int}.example.com": {id:Int} is the regex Int')
    expect(hint).toContain('Write {id:int}')
  })

  it('builds what the hints suggest', async () => {
    const m = await compileRoutes((r) => {
      r.get('/p/{n:int}', noop, 'int')
      r.get('/q/{n:(?:integer)}', noop, 'text')
    })
    expect(m.match('GET', '/p/7')).toMatchObject({ route: { name: 'int' }, params: { n: 7 } })
    expect(m.match('GET', '/q/integer')).toMatchObject({
      route: { name: 'text' },
      params: { n: 'integer' },
    })
    expect(m.match('GET', '/q/7')).toEqual({ status: 404 })
  })
})
