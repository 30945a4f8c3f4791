/**
 * withCookie / withoutCookie: the Set-Cookie fields they make (the `cookie` package's
 * serialisation with Laravel's defaults), the cookies browsers would drop refused as TypeErrors,
 * one field per cookie with the last of a name, path and domain kept, and headers added later
 * leaving them in place.
 */
import { describe, expect, it } from 'vitest'
import { FwResponse, json, noContent } from '../../src/runtime/response.js'
import type { CookieOptions } from '../../src/runtime/set-cookie.js'

const cookiesOf = (response: FwResponse): unknown => response.headers['set-cookie']
const set = (name: string, value: string, options?: CookieOptions): unknown =>
  cookiesOf(json({}).withCookie(name, value, options))

describe('withCookie: the field', () => {
  it('defaults to Path=/, HttpOnly and SameSite=Lax, not Secure', () => {
    expect(set('theme', 'dark')).toEqual(['theme=dark; Path=/; HttpOnly; SameSite=Lax'])
  })

  it('writes every attribute given, maxAge floored to whole seconds', () => {
    const field = set('sid', 'abc', {
      maxAge: 3600.9,
      expires: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
      path: '/app',
      domain: 'Example.com',
      secure: true,
      httpOnly: false,
      sameSite: 'strict',
      partitioned: true,
      priority: 'high',
    })
    expect(field).toEqual([
      'sid=abc; Max-Age=3600; Domain=Example.com; Path=/app; Expires=Wed, 02 Jan 2030 03:04:05 GMT; Secure; Partitioned; Priority=High; SameSite=Strict',
    ])
  })

  it('percent-encodes the value: ;, CR, LF, spaces and non-ASCII cannot end or split it', () => {
    expect(set('v', 'a b;c\r\nSet-Cookie: admin=1')).toEqual([
      'v=a%20b%3Bc%0D%0ASet-Cookie%3A%20admin%3D1; Path=/; HttpOnly; SameSite=Lax',
    ])
    expect(set('v', 'x; Domain=evil.example')).toEqual([
      'v=x%3B%20Domain%3Devil.example; Path=/; HttpOnly; SameSite=Lax',
    ])
    expect(set('v', 'café ☕')).toEqual(['v=caf%C3%A9%20%E2%98%95; Path=/; HttpOnly; SameSite=Lax'])
    expect(set('empty', '')).toEqual(['empty=; Path=/; HttpOnly; SameSite=Lax'])
  })

  it('refuses a name that is no token, with the name in the message', () => {
    for (const name of ['', 'a b', 'a;b', 'a=b', 'a\r\nb', 'caf\u00e9', 'a,b', '"a"'])
      expect(() => set(name, 'x'), JSON.stringify(name)).toThrow(TypeError)
    expect(() => set('a\r\nb', 'x')).toThrow(
      /^withCookie\("a\\r\\nb"\): a cookie name is letters, digits/,
    )
  })

  it('refuses a value that is no string, or not well-formed Unicode', () => {
    expect(() => json({}).withCookie('n', 5 as unknown as string)).toThrow(
      'withCookie("n"): the value must be a string, not number',
    )
    expect(() => json({}).withCookie('n', undefined as unknown as string)).toThrow(TypeError)
    expect(() => set('n', 'half \ud800 pair')).toThrow(
      'withCookie("n"): the value is not well-formed Unicode',
    )
  })

  it('refuses control characters and ; in the path and domain', () => {
    for (const path of ['/a\r\nSet-Cookie: x=1', '/a;b', '/a\x00', '/a\x7f', '/a\tb'])
      expect(() => set('n', 'v', { path }), JSON.stringify(path)).toThrow(
        'withCookie("n"): path must be a string without control characters or \';\'',
      )
    for (const domain of ['example.com\r\nX: 1', 'example.com; Secure'])
      expect(() => set('n', 'v', { domain })).toThrow(/domain must be a string without control/)
    // What the cookie package refuses, said with the cookie's name.
    expect(() => set('n', 'v', { domain: 'exa mple.com' })).toThrow(
      'withCookie("n"): option domain is invalid',
    )
  })

  it('refuses a maxAge that is no finite number and an expires that is no valid Date', () => {
    for (const maxAge of [NaN, Infinity, -Infinity, '60' as unknown as number])
      expect(() => set('n', 'v', { maxAge }), String(maxAge)).toThrow(
        'withCookie("n"): maxAge must be a finite number of seconds',
      )
    expect(set('n', 'v', { maxAge: 0 })).toEqual(['n=v; Max-Age=0; Path=/; HttpOnly; SameSite=Lax'])
    expect(() => set('n', 'v', { expires: new Date('nope') })).toThrow(
      'expires must be a valid Date',
    )
    expect(() => set('n', 'v', { expires: 0 as unknown as Date })).toThrow(TypeError)
  })

  it("refuses sameSite 'none' and partitioned without secure (browsers drop them)", () => {
    expect(() => set('n', 'v', { sameSite: 'none' })).toThrow(
      'withCookie("n"): sameSite \'none\' needs secure: true (browsers drop the cookie otherwise)',
    )
    expect(() => set('n', 'v', { partitioned: true })).toThrow(/partitioned needs secure: true/)
    expect(set('n', 'v', { sameSite: 'none', secure: true })).toEqual([
      'n=v; Path=/; HttpOnly; Secure; SameSite=None',
    ])
  })

  it('refuses values outside the options types, and misspelt option names', () => {
    expect(() => set('n', 'v', { sameSite: 'Lax' as 'lax' })).toThrow(
      "sameSite must be 'lax', 'strict' or 'none'",
    )
    expect(() => set('n', 'v', { priority: 'urgent' as 'high' })).toThrow(
      "priority must be 'low', 'medium' or 'high'",
    )
    expect(() => set('n', 'v', { httpOnly: 'false' as unknown as boolean })).toThrow(
      'httpOnly must be true or false',
    )
    expect(() => set('n', 'v', { httponly: false } as CookieOptions)).toThrow(
      'withCookie("n"): unknown option `httponly` — did you mean `httpOnly`?',
    )
  })

  it('holds __Secure- and __Host- cookies to their prefix rules, whatever their case', () => {
    expect(() => set('__Secure-id', 'v')).toThrow(
      'withCookie("__Secure-id"): a __Secure- cookie needs secure: true',
    )
    expect(() => set('__secure-id', 'v')).toThrow(/needs secure: true/)
    expect(set('__Secure-id', 'v', { secure: true, domain: 'example.com', path: '/a' })).toEqual([
      '__Secure-id=v; Domain=example.com; Path=/a; HttpOnly; Secure; SameSite=Lax',
    ])
    expect(() => set('__Host-id', 'v')).toThrow(/a __Host- cookie needs secure: true/)
    expect(() => set('__HOST-id', 'v', { secure: true, path: '/a' })).toThrow(
      'withCookie("__HOST-id"): a __Host- cookie needs path \'/\' and no domain',
    )
    expect(() => set('__Host-id', 'v', { secure: true, domain: 'example.com' })).toThrow(
      /needs path '\/' and no domain/,
    )
    expect(set('__Host-id', 'v', { secure: true })).toEqual([
      '__Host-id=v; Path=/; HttpOnly; Secure; SameSite=Lax',
    ])
  })

  it('refuses a name and encoded value over the 4096 bytes browsers keep', () => {
    expect(() => set('a', 'x'.repeat(4095))).not.toThrow()
    expect(() => set('a', 'x'.repeat(4096))).toThrow(
      'withCookie("a"): name and encoded value exceed the 4096 bytes browsers keep',
    )
    // Encoded: 1366 × '%E2%98%95' is over the limit though the string is short.
    expect(() => set('a', '☕'.repeat(1366))).toThrow(/exceed the 4096 bytes/)
  })
})

describe('withCookie: several cookies', () => {
  it('adds one Set-Cookie field per cookie, never one joined with commas', () => {
    const response = json({})
      .withCookie('a', '1', { expires: new Date(Date.UTC(2030, 0, 1)) })
      .withCookie('b', '2')
    expect(cookiesOf(response)).toEqual([
      'a=1; Path=/; Expires=Tue, 01 Jan 2030 00:00:00 GMT; HttpOnly; SameSite=Lax',
      'b=2; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it('keeps the last of a name, path and domain; other paths and domains are other cookies', () => {
    const response = json({})
      .withCookie('a', '1')
      .withCookie('b', '2')
      .withCookie('a', '3')
      .withCookie('a', '4', { path: '/admin' })
      .withCookie('a', '5', { domain: 'example.com' })
      .withCookie('a', '6', { domain: 'EXAMPLE.com' })
    expect(cookiesOf(response)).toEqual([
      'b=2; Path=/; HttpOnly; SameSite=Lax',
      'a=3; Path=/; HttpOnly; SameSite=Lax',
      'a=4; Path=/admin; HttpOnly; SameSite=Lax',
      'a=6; Domain=EXAMPLE.com; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it('adds to a Set-Cookie given as a header, replacing the same cookie there too', () => {
    const given = json({}, 200, { 'Set-Cookie': 'raw=1; path=/; Domain=.example.com' })
    expect(cookiesOf(given.withCookie('b', '2'))).toEqual([
      'raw=1; path=/; Domain=.example.com',
      'b=2; Path=/; HttpOnly; SameSite=Lax',
    ])
    expect(cookiesOf(given.withCookie('raw', '2', { domain: 'example.com' }))).toEqual([
      'raw=2; Domain=example.com; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it('leaves the response it is called on as it was', () => {
    const original = json({ ok: true })
    const one = original.withCookie('a', '1')
    one.withCookie('b', '2')
    expect(cookiesOf(original)).toBeUndefined()
    expect(cookiesOf(one)).toEqual(['a=1; Path=/; HttpOnly; SameSite=Lax'])
  })

  it('survives withHeader, withHeaders and withStatus of other fields', () => {
    const cookies = ['a=1; Path=/; HttpOnly; SameSite=Lax', 'b=2; Path=/; HttpOnly; SameSite=Lax']
    const base = json({}).withCookie('a', '1').withCookie('b', '2')
    const derived = [
      base.withHeader('x-request-id', 'r1'),
      base.withHeader('content-type', 'text/plain').withHeader('x-other', '1'),
      base.withHeaders({ Vary: 'Accept' }),
      base.withStatus(201),
    ]
    for (const response of derived) expect(cookiesOf(response)).toEqual(cookies)
    // Listed separately for writeHead, whether the headers are the object or a flat list.
    const wire = FwResponse.wireHeaders(base.withHeader('x-request-id', 'r1'))
    expect(wire).toEqual(expect.arrayContaining(['set-cookie', cookies]))
  })
})

describe('withoutCookie', () => {
  it('expires the cookie: empty, Max-Age=0, an Expires in 1970, the defaults', () => {
    expect(cookiesOf(noContent().withoutCookie('sid'))).toEqual([
      'sid=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ])
  })

  it('names the cookie by the path and domain given, replacing an earlier field of it', () => {
    const response = json({})
      .withCookie('sid', 'old', { path: '/admin', domain: 'example.com' })
      .withCookie('sid', 'root')
      .withoutCookie('sid', { path: '/admin', domain: 'example.com' })
    expect(cookiesOf(response)).toEqual([
      'sid=root; Path=/; HttpOnly; SameSite=Lax',
      'sid=; Max-Age=0; Domain=example.com; Path=/admin; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ])
  })

  it('holds to the same rules, and takes no maxAge or expires', () => {
    expect(() => json({}).withoutCookie('__Host-sid')).toThrow(
      'withoutCookie("__Host-sid"): a __Host- cookie needs secure: true',
    )
    expect(cookiesOf(json({}).withoutCookie('__Host-sid', { secure: true }))).toEqual([
      '__Host-sid=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax',
    ])
    expect(() => json({}).withoutCookie('a b')).toThrow(TypeError)
    expect(() => json({}).withoutCookie('sid', { maxAge: 5 } as CookieOptions)).toThrow(
      'withoutCookie("sid"): unknown option `maxAge`',
    )
  })
})
