import { describe, expect, it } from 'vitest'
import { analyzeRoutes, type RouteTable } from '../../src/compiler/analyze.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { FwError, type ErrorCode } from '../../src/shared/errors.js'

const handler = (): null => null

class UserController {
  show(): null {
    return null
  }
}

function analyze(register: (r: Registrar) => void): RouteTable {
  const registrar = collectRoutes(register)
  return analyzeRoutes(registrar.routes, new Set(registrar.aliases.keys()))
}

/** Analyzes the routes and returns the FwError it throws, checking its code. */
function rejection(register: (r: Registrar) => void, code: ErrorCode): FwError {
  let caught: unknown
  try {
    analyze(register)
  } catch (error) {
    caught = error
  }
  expect(caught, 'expected the route table to be rejected').toBeInstanceOf(FwError)
  const error = caught as FwError
  expect(error.code).toBe(code)
  expect(error.hint).toBeTruthy()
  return error
}

describe('a valid route table', () => {
  it('parses each route and expands optional parameters into variants', () => {
    const table = analyze((r) => {
      r.get('/users/{id:int}', handler, 'users.show')
      r.get('/posts/{slug?}', handler)
    })
    expect(table.routes).toHaveLength(2)
    expect(table.routes[0]!.variants).toHaveLength(1)
    expect(table.routes[1]!.variants.map((v) => [v.segments.length, v.absent])).toEqual([
      [1, ['slug']],
      [2, []],
    ])
  })

  it('lists domain hosts before the hostless group', () => {
    const table = analyze((r) => {
      r.get('/a', handler)
      r.group({ domain: '{account}.example.com' }, (r) => r.get('/b', handler))
    })
    expect(table.hosts.map((h) => h.pattern)).toEqual(['{account}.example.com', null])
  })
})

describe('empty route table', () => {
  it('is rejected with FW_ROUTES_EMPTY', () => {
    const error = rejection(() => undefined, 'FW_ROUTES_EMPTY')
    expect(error.message).toMatch(/registers no routes/)
  })
})

describe('route names', () => {
  it('rejects a name used twice with FW_NAME_DUPLICATE, naming both routes', () => {
    const error = rejection((r) => {
      r.get('/a', handler, 'home')
      r.post('/b', handler, 'home')
    }, 'FW_NAME_DUPLICATE')
    expect(error.message).toContain('Route name "home" is used twice')
    expect(error.message).toContain('POST /b')
    expect(error.message).toContain('GET /a')
  })

  it('rejects a name duplicated through group name prefixes', () => {
    const error = rejection((r) => {
      r.get('/users', handler, 'v1.users')
      r.group({ name: 'v1.', prefix: '/v1' }, (r) => r.get('/users', handler, 'users'))
    }, 'FW_NAME_DUPLICATE')
    expect(error.message).toContain('"v1.users"')
  })

  it('rejects an empty name or one with spaces with FW_NAME_INVALID', () => {
    expect(rejection((r) => r.get('/a', handler, { name: '' }), 'FW_NAME_INVALID').message).toMatch(
      /GET \/a: route name "" is empty or has spaces/,
    )
    expect(
      rejection((r) => r.get('/a', handler, 'users show'), 'FW_NAME_INVALID').message,
    ).toContain('"users show"')
  })
})

describe('duplicate and shadowed routes', () => {
  it('rejects the same method and path twice with FW_ROUTE_DUPLICATE', () => {
    const error = rejection((r) => {
      r.get('/users', handler)
      r.get('/users', handler)
    }, 'FW_ROUTE_DUPLICATE')
    expect(error.message).toMatch(/GET \/users is registered twice \(first at route #0\)/)
  })

  it('treats a trailing slash as the same path (a duplicate)', () => {
    rejection((r) => {
      r.get('/users', handler)
      r.get('/users/', handler)
    }, 'FW_ROUTE_DUPLICATE')
  })

  it('allows the same path for different methods', () => {
    expect(() =>
      analyze((r) => {
        r.get('/users', handler)
        r.post('/users', handler)
      }),
    ).not.toThrow()
  })

  it('allows the same method and path on different hosts', () => {
    expect(() =>
      analyze((r) => {
        r.get('/users', handler)
        r.group({ domain: 'admin.example.com' }, (r) => r.get('/users', handler))
      }),
    ).not.toThrow()
  })

  it('rejects /u/{id} and /u/{name} for one method with FW_ROUTE_SHADOWED', () => {
    const error = rejection((r) => {
      r.get('/u/{id}', handler)
      r.get('/u/{name}', handler)
    }, 'FW_ROUTE_SHADOWED')
    expect(error.message).toMatch(/GET \/u\/\{name\} can never match: GET \/u\/\{id\}/)
    expect(error.hint).toMatch(/\{id:int\}/)
  })

  it('allows /u/{id} and /u/{name} for different methods', () => {
    expect(() =>
      analyze((r) => {
        r.get('/u/{id}', handler)
        r.delete('/u/{name}', handler)
      }),
    ).not.toThrow()
  })

  it('allows /u/{id:int} next to /u/{name}', () => {
    expect(() =>
      analyze((r) => {
        r.get('/u/{id:int}', handler)
        r.get('/u/{name}', handler)
      }),
    ).not.toThrow()
  })

  it('rejects two routes with the same custom regex in one place', () => {
    rejection((r) => {
      r.get('/c/{a:[A-Z]{3}}', handler)
      r.get('/c/{b:[A-Z]{3}}', handler)
    }, 'FW_ROUTE_SHADOWED')
  })

  // Regression: a route was refused when one of its variants was taken, though the others
  // still match: /a/{b?} after /a answers /a/x, and after /a/{c} it is the only route for /a.
  it('allows /a/{b?} after /a, which still matches /a/x', () => {
    const table = analyze((r) => {
      r.get('/a', handler)
      r.get('/a/{b?}', handler)
    })
    expect(table.routes).toHaveLength(2)
  })

  it('allows /u/{name?} after /u/{id}: it is the only route matching /u', () => {
    expect(() =>
      analyze((r) => {
        r.get('/u/{id}', handler)
        r.get('/u/{name?}', handler)
      }),
    ).not.toThrow()
  })

  it('rejects an optional route every variant of which an earlier route takes', () => {
    const error = rejection((r) => {
      r.get('/u', handler)
      r.get('/u/{id}', handler)
      r.get('/u/{name?}', handler)
    }, 'FW_ROUTE_SHADOWED')
    expect(error.message).toContain(
      'GET /u/{name?} can never match: GET /u (route #0) and GET /u/{id} (route #1) match',
    )
  })

  it('rejects /a/{b?} after /a/{c?}: both of its variants are taken', () => {
    rejection((r) => {
      r.get('/a/{c?}', handler)
      r.get('/a/{b?}', handler)
    }, 'FW_ROUTE_SHADOWED')
  })

  it('rejects /a after /a/{b?}, whose short form is /a', () => {
    rejection((r) => {
      r.get('/a/{b?}', handler)
      r.get('/a', handler)
    }, 'FW_ROUTE_SHADOWED')
  })

  it('rejects /a/{b?} next to a later /a/{c}', () => {
    rejection((r) => {
      r.get('/a/{b?}', handler)
      r.get('/a/{c}', handler)
    }, 'FW_ROUTE_SHADOWED')
  })
})

describe('catch-all order', () => {
  it('rejects a route after a catch-all that covers it with FW_CATCHALL_NOT_LAST', () => {
    const error = rejection((r) => {
      r.get('/files/{p:.*}', handler)
      r.get('/files/x', handler)
    }, 'FW_CATCHALL_NOT_LAST')
    expect(error.message).toMatch(
      /GET \/files\/x is registered after the catch-all GET \/files\/\{p:\.\*\}/,
    )
    expect(error.hint).toMatch(/Register the catch-all after/)
  })

  it('rejects a parameter route after a catch-all that covers it', () => {
    rejection((r) => {
      r.get('/files/{p:.+}', handler)
      r.get('/files/{id:int}/meta', handler)
    }, 'FW_CATCHALL_NOT_LAST')
  })

  it('rejects any route after a root catch-all', () => {
    rejection((r) => {
      r.get('/{p:.*}', handler)
      r.get('/late', handler)
    }, 'FW_CATCHALL_NOT_LAST')
  })

  it('allows a route outside the catch-all prefix after it', () => {
    expect(() =>
      analyze((r) => {
        r.get('/files/{p:.*}', handler)
        r.get('/other', handler)
      }),
    ).not.toThrow()
  })

  it('allows a broader catch-all after a narrower one', () => {
    expect(() =>
      analyze((r) => {
        r.get('/files/{p:.*}', handler)
        r.get('/{p:.*}', handler)
      }),
    ).not.toThrow()
  })

  it('allows routes before the catch-all', () => {
    expect(() =>
      analyze((r) => {
        r.get('/files/x', handler)
        r.get('/files/{id:int}', handler)
        r.get('/files/{p:.*}', handler)
      }),
    ).not.toThrow()
  })

  it('does not apply a catch-all of one host to routes of another', () => {
    expect(() =>
      analyze((r) => {
        r.group({ domain: 'a.example.com' }, (r) => r.get('/{p:.*}', handler))
        r.get('/x', handler)
      }),
    ).not.toThrow()
  })
})

describe('patterns', () => {
  it('rejects a regex that does not compile with FW_REGEX_INVALID', () => {
    const error = rejection((r) => r.get('/a/{x:(abc}', handler), 'FW_REGEX_INVALID')
    expect(error.message).toContain('"/a/{x:(abc}"')
    expect(error.message).toMatch(/regex of "x" does not compile/)
  })

  it('rejects a catastrophic regex with FW_REGEX_UNSAFE', () => {
    const error = rejection((r) => r.get('/a/{x:(a+)+}', handler), 'FW_REGEX_UNSAFE')
    expect(error.message).toMatch(/\(a\+\)\+.*backtrack catastrophically/)
  })

  it('rejects an invalid path with FW_PATTERN_INVALID', () => {
    const error = rejection((r) => r.get('/files/{name}.txt', handler), 'FW_PATTERN_INVALID')
    expect(error.message).toContain('mixes text and a parameter')
  })

  it('rejects an invalid domain pattern', () => {
    rejection(
      (r) => r.group({ domain: 'example.com/x' }, (r) => r.get('/a', handler)),
      'FW_PATTERN_INVALID',
    )
  })

  it('rejects a domain parameter repeated in the path with FW_PARAM_DUPLICATE', () => {
    const error = rejection(
      (r) => r.group({ domain: '{account}.example.com' }, (r) => r.get('/x/{account}', handler)),
      'FW_PARAM_DUPLICATE',
    )
    expect(error.message).toContain('{account}.example.com/x/{account}')
    expect(error.message).toContain('"account" is used twice')
  })
})

describe('middleware aliases', () => {
  it.each(['auht', 'throttles:5,60', 'Auth', ''])(
    'rejects the unknown alias %j with FW_MIDDLEWARE_INVALID',
    (alias) => {
      const error = rejection(
        (r) => r.get('/a', handler, { middleware: [alias] }),
        'FW_MIDDLEWARE_INVALID',
      )
      expect(error.message).toContain('GET /a')
      expect(error.message).toMatch(/unknown middleware alias/)
      expect(error.hint).toMatch(/auth, throttle:<max>,<seconds>/)
    },
  )

  it('names the unknown alias in the message', () => {
    const error = rejection(
      (r) => r.get('/a', handler, { middleware: ['auht'] }),
      'FW_MIDDLEWARE_INVALID',
    )
    expect(error.message).toBe('GET /a: unknown middleware alias "auht"')
  })

  it.each([
    'throttle:0,60',
    'throttle:a,60',
    'throttle:0',
    'throttle:5,0',
    'throttle:5,60,1',
    'throttle:',
  ])('rejects the malformed %j, saying what throttle expects', (alias) => {
    const error = rejection(
      (r) => r.get('/a', handler, { middleware: [alias] }),
      'FW_MIDDLEWARE_INVALID',
    )
    expect(error.message).toContain(alias)
    expect(error.message).toMatch(/one or two positive integers/)
  })

  it.each(['negotiate:en,', 'negotiate:<b>', 'negotiate:en_US'])(
    'rejects the malformed locale list %j',
    (alias) => {
      const error = rejection(
        (r) => r.get('/a', handler, { middleware: [alias] }),
        'FW_MIDDLEWARE_INVALID',
      )
      expect(error.message).toMatch(/language tags/)
    },
  )

  it.each(['auth:x', 'verifySignedUrl:1'])('rejects parameters on %j', (alias) => {
    const error = rejection(
      (r) => r.get('/a', handler, { middleware: [alias] }),
      'FW_MIDDLEWARE_INVALID',
    )
    expect(error.message).toMatch(/takes no parameters/)
  })

  it.each(['role', 'role:', 'role:admin editor'])(
    'rejects the malformed role alias %j',
    (alias) => {
      const error = rejection(
        (r) => r.get('/a', handler, { middleware: [alias] }),
        'FW_MIDDLEWARE_INVALID',
      )
      expect(error.message).toMatch(/comma-separated list of roles/)
    },
  )

  it('rejects a middleware that is neither a string nor a function', () => {
    const error = rejection(
      (r) => r.get('/a', handler, { middleware: [42 as unknown as string] }),
      'FW_MIDDLEWARE_INVALID',
    )
    // Refused at the registration, naming the entry.
    expect(error.message).toBe(
      'GET /a: the middleware must be a list of aliases or functions, got 42 at entry 1',
    )
  })

  it('rejects an invalid alias coming from a group', () => {
    const error = rejection(
      (r) => r.group({ middleware: ['throttle:0,60'] }, (r) => r.get('/a', handler)),
      'FW_MIDDLEWARE_INVALID',
    )
    expect(error.message).toContain('throttle:0,60')
  })

  it.each([
    'throttle',
    'throttle:5,60',
    'throttle:600,60',
    'role:admin',
    'role:admin,editor',
    'auth',
    'verifySignedUrl',
  ])('accepts the built-in alias %j', (alias) => {
    expect(() => analyze((r) => r.get('/a', handler, { middleware: [alias] }))).not.toThrow()
  })

  it('accepts a custom alias registered with r.alias()', () => {
    expect(() =>
      analyze((r) => {
        r.alias('tenant', (req, next) => next(req))
        r.get('/a', handler, { middleware: ['tenant'] })
      }),
    ).not.toThrow()
  })

  it('lists custom aliases in the hint when an alias is unknown', () => {
    const error = rejection((r) => {
      r.alias('tenant', (req, next) => next(req))
      r.get('/a', handler, { middleware: ['tenat'] })
    }, 'FW_MIDDLEWARE_INVALID')
    expect(error.hint).toContain('tenant')
  })

  it('accepts a middleware function', () => {
    expect(() =>
      analyze((r) => r.get('/a', handler).withMiddleware((req, next) => next(req))),
    ).not.toThrow()
  })
})

describe('handlers', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
    ['a blank string', '   '],
    ['a [Class, method] pair naming a missing method', [UserController, 'missingMethod']],
    ['a pair with a non-function class', [{}, 'show']],
    ['a one-element array', [UserController]],
    ['a number', 42],
    // Regressions: these passed the build, then failed (or called 'b') on the first request.
    ["'Class@' without a method", 'UserController@'],
    ["'@method' without a key", '@show'],
    ['two @', 'a@b@c'],
    ['white space in it', 'User Controller@show'],
  ])('rejects %s with FW_HANDLER_INVALID', (_label, bad) => {
    const error = rejection((r) => r.get('/a', bad as never), 'FW_HANDLER_INVALID')
    expect(error.message).toMatch(/^GET \/a: the handler must be a function/)
    expect(error.message).toContain("[Class, 'method']")
  })

  it('names the missing method of a pair, and says a class field holding an arrow is none', () => {
    class Arrows {
      show = (): string => 'instance-only'
    }
    const error = rejection((r) => r.get('/a', [Arrows, 'show']), 'FW_HANDLER_INVALID')
    expect(error.message).toMatch(/'Class@method' string: Arrows has no method "show"$/)
    expect(error.hint).toContain(
      'An arrow function in a class field (show = (req) => …) is not a method: declare show(req) { … } in the class body',
    )
  })

  it.each([
    ['a function', handler],
    ['a [Class, method] pair', [UserController, 'show']],
    ["a 'Class@method' string", 'UserController@show'],
    ["a 'Key' string (its __invoke)", 'UserController'],
  ])('accepts %s', (_label, good) => {
    expect(() => analyze((r) => r.get('/a', good as never))).not.toThrow()
  })
})

describe('source locations', () => {
  it('attaches the file and line of the route to validation errors when captured', () => {
    const registrar = collectRoutes(
      (r) => {
        r.get('/a', handler, 'x')
        r.get('/b', handler, 'x')
      },
      { captureLocations: true },
    )
    let caught: FwError | undefined
    try {
      analyzeRoutes(registrar.routes, new Set())
    } catch (error) {
      caught = error as FwError
    }
    expect(caught?.code).toBe('FW_NAME_DUPLICATE')
    expect(caught?.location?.file).toContain('analyze.test.ts')
    expect(caught?.message).toMatch(/analyze\.test\.ts:\d+/)
  })

  it('attaches the location to pattern errors too', () => {
    const registrar = collectRoutes((r) => r.get('/a//b', handler), { captureLocations: true })
    let caught: FwError | undefined
    try {
      analyzeRoutes(registrar.routes, new Set())
    } catch (error) {
      caught = error as FwError
    }
    expect(caught?.code).toBe('FW_PATTERN_INVALID')
    expect(caught?.location?.file).toContain('analyze.test.ts')
  })
})
