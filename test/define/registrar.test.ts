import { describe, expect, it } from 'vitest'
import {
  collectRoutes,
  defineRoutes,
  joinPaths,
  Registrar,
  Route,
} from '../../src/define/registrar.js'
import type { Middleware } from '../../src/runtime/types.js'
import { FwError } from '../../src/shared/errors.js'

const handler = (): null => null
const other = (): null => null
// Two distinct middleware functions for alias() (which takes middleware, not handlers).
const pass: Middleware = (req, next) => next(req)
const passToo: Middleware = (req, next) => next(req)

/** The record of the only route a routes function registers. */
function onlyRoute(register: (r: Registrar) => void) {
  const { routes } = collectRoutes(register)
  expect(routes).toHaveLength(1)
  return routes[0]!
}

describe('verbs', () => {
  it.each([
    ['get', 'GET'],
    ['post', 'POST'],
    ['put', 'PUT'],
    ['patch', 'PATCH'],
    ['delete', 'DELETE'],
    ['options', 'OPTIONS'],
    ['head', 'HEAD'],
  ] as const)('%s() records a %s route with its path and handler', (verb, method) => {
    const route = onlyRoute((r) => r[verb]('/items/{id}', handler))
    expect(route).toMatchObject({
      id: 0,
      method,
      path: '/items/{id}',
      host: null,
      name: null,
      middleware: [],
      handler,
      scopes: [0],
    })
  })

  it('returns a Route for chaining', () => {
    const r = new Registrar()
    expect(r.get('/', handler)).toBeInstanceOf(Route)
  })

  it('numbers routes in registration order', () => {
    const { routes } = collectRoutes((r) => {
      r.get('/a', handler)
      r.post('/b', handler)
      r.get('/c', handler)
    })
    expect(routes.map((route) => [route.id, route.method, route.path])).toEqual([
      [0, 'GET', '/a'],
      [1, 'POST', '/b'],
      [2, 'GET', '/c'],
    ])
  })

  it('accepts handlers as a function, a [Class, method] pair or a string, untouched', () => {
    class UserController {
      show(): null {
        return null
      }
    }
    const { routes } = collectRoutes((r) => {
      r.get('/a', handler)
      r.get('/b', [UserController, 'show'])
      r.get('/c', 'UserController@show')
    })
    expect(routes.map((route) => route.handler)).toEqual([
      handler,
      [UserController, 'show'],
      'UserController@show',
    ])
  })

  it('does not parse or validate the path while registering', () => {
    expect(onlyRoute((r) => r.get('/files/{name}.txt', handler)).path).toBe('/files/{name}.txt')
  })

  it('rejects a path that is not a string with FW_PATTERN_INVALID', () => {
    const r = new Registrar()
    const register = () => r.get(42 as unknown as string, handler)
    expect(register).toThrow(FwError)
    expect(register).toThrow(/GET route path must be a string/)
    try {
      register()
    } catch (error) {
      expect((error as FwError).code).toBe('FW_PATTERN_INVALID')
    }
  })
})

describe('names and middleware of a route', () => {
  it('takes a name as the third argument string', () => {
    expect(onlyRoute((r) => r.get('/', handler, 'home')).name).toBe('home')
  })

  it('takes name and middleware from an options object', () => {
    const route = onlyRoute((r) =>
      r.get('/me', handler, { name: 'me', middleware: ['auth', 'throttle:5,60'] }),
    )
    expect(route.name).toBe('me')
    expect(route.middleware).toEqual(['auth', 'throttle:5,60'])
  })

  it('accepts a single middleware in the options object', () => {
    expect(onlyRoute((r) => r.get('/', handler, { middleware: 'auth' })).middleware).toEqual([
      'auth',
    ])
  })

  it('leaves the name null when the third argument is null or omitted', () => {
    const { routes } = collectRoutes((r) => {
      r.get('/a', handler, null)
      r.get('/b', handler)
      r.get('/c', handler, { middleware: ['auth'] })
    })
    expect(routes.map((route) => route.name)).toEqual([null, null, null])
  })

  it('sets the name with withName()', () => {
    expect(onlyRoute((r) => r.get('/', handler).withName('home')).name).toBe('home')
  })

  it('appends middleware with withMiddleware(), accepting a list or a single one', () => {
    const fn: Middleware = (req, next) => next(req)
    const route = onlyRoute((r) =>
      r
        .get('/', handler, { middleware: ['auth'] })
        .withMiddleware(['role:admin'])
        .withMiddleware(fn),
    )
    expect(route.middleware).toEqual(['auth', 'role:admin', fn])
  })

  it('chains withName and withMiddleware in any order, returning the same route', () => {
    const r = new Registrar()
    const route = r.get('/', handler)
    expect(route.withName('x')).toBe(route)
    expect(route.withMiddleware(['auth'])).toBe(route)
    r.post('/', handler).withMiddleware('auth').withName('y').withMiddleware('throttle:5,60')
    expect(r.routes.map((rec) => [rec.name, rec.middleware])).toEqual([
      ['x', ['auth']],
      ['y', ['auth', 'throttle:5,60']],
    ])
  })

  it('lets withName() replace a name given as the third argument', () => {
    expect(onlyRoute((r) => r.get('/', handler, 'old').withName('new')).name).toBe('new')
  })
})

describe('groups', () => {
  it('applies prefix, domain, middleware and name prefix from an options object', () => {
    const route = onlyRoute((r) =>
      r.group(
        { prefix: '/api', domain: 'api.example.com', middleware: ['auth'], name: 'api.' },
        (r) => r.get('/users', handler, { name: 'users', middleware: ['throttle:5,60'] }),
      ),
    )
    expect(route).toMatchObject({
      path: '/api/users',
      host: 'api.example.com',
      name: 'api.users',
      middleware: ['auth', 'throttle:5,60'],
    })
  })

  it('accepts the positional form group(prefix, domain, middleware, namePrefix, callback)', () => {
    const route = onlyRoute((r) =>
      r.group('/admin', '{account}.example.com', ['auth', 'role:admin'], 'admin.', (r) => {
        r.get('/users', handler, 'users')
      }),
    )
    expect(route).toMatchObject({
      path: '/admin/users',
      host: '{account}.example.com',
      name: 'admin.users',
      middleware: ['auth', 'role:admin'],
    })
  })

  it('accepts the positional form with the callback early: group(prefix, callback)', () => {
    const route = onlyRoute((r) => r.group('/api', (r) => r.get('/ping', handler, 'ping')))
    expect(route).toMatchObject({ path: '/api/ping', host: null, name: 'ping', middleware: [] })
  })

  it('accepts null for every positional option', () => {
    const route = onlyRoute((r) =>
      r.group(null, null, [], null, (r) => {
        r.get('/x', handler, 'x')
      }),
    )
    expect(route).toMatchObject({ path: '/x', host: null, name: 'x', middleware: [] })
  })

  it('composes nested prefixes, name prefixes and middleware, outer group first', () => {
    const route = onlyRoute((r) =>
      r.group({ prefix: '/api', middleware: ['throttle:60,60'] }, (r) => {
        r.group({ prefix: '/v1', name: 'v1.', middleware: ['auth'] }, (r) => {
          r.group({ prefix: '/users', name: 'users.', middleware: ['role:admin'] }, (r) => {
            r.get('/{id:int}', handler, { name: 'show', middleware: ['verifySignedUrl'] })
          })
        })
      }),
    )
    expect(route.path).toBe('/api/v1/users/{id:int}')
    expect(route.name).toBe('v1.users.show')
    expect(route.middleware).toEqual(['throttle:60,60', 'auth', 'role:admin', 'verifySignedUrl'])
  })

  it('puts withMiddleware() after the group middleware', () => {
    const route = onlyRoute((r) =>
      r.group({ middleware: ['auth'] }, (r) => {
        r.get('/', handler).withMiddleware('throttle:5,60')
      }),
    )
    expect(route.middleware).toEqual(['auth', 'throttle:5,60'])
  })

  it('prepends the group name prefix to withName()', () => {
    const route = onlyRoute((r) =>
      r.group({ name: 'v1.' }, (r) =>
        r.group({ name: 'users.' }, (r) => r.get('/', handler).withName('index')),
      ),
    )
    expect(route.name).toBe('v1.users.index')
  })

  it('leaves unnamed routes unnamed inside a group with a name prefix', () => {
    expect(onlyRoute((r) => r.group({ name: 'v1.' }, (r) => r.get('/', handler))).name).toBeNull()
  })

  it('inherits the domain in nested groups, and lets an inner domain override it', () => {
    const { routes } = collectRoutes((r) => {
      r.group({ domain: '{account}.example.com' }, (r) => {
        r.group({ prefix: '/inner' }, (r) => r.get('/a', handler))
        r.group({ domain: 'admin.example.com' }, (r) => r.get('/b', handler))
        r.get('/c', handler)
      })
      r.get('/d', handler)
    })
    expect(routes.map((route) => [route.path, route.host])).toEqual([
      ['/inner/a', '{account}.example.com'],
      ['/b', 'admin.example.com'],
      ['/c', '{account}.example.com'],
      ['/d', null],
    ])
  })

  it('restores the outer scope after a group, even when its callback throws', () => {
    const r = new Registrar()
    expect(() =>
      r.group({ prefix: '/broken', middleware: ['auth'], name: 'b.' }, () => {
        throw new Error('boom')
      }),
    ).toThrow('boom')
    r.get('/after', handler, 'after')
    expect(r.routes[0]).toMatchObject({
      path: '/after',
      name: 'after',
      middleware: [],
      scopes: [0],
    })
  })

  it('does not let a group change routes registered outside it', () => {
    const { routes } = collectRoutes((r) => {
      r.get('/before', handler, 'before')
      r.group({ prefix: '/g', name: 'g.', middleware: ['auth'] }, (r) =>
        r.get('/in', handler, 'in'),
      )
      r.get('/after', handler, 'after')
    })
    expect(routes.map((route) => [route.path, route.name, route.middleware])).toEqual([
      ['/before', 'before', []],
      ['/g/in', 'g.in', ['auth']],
      ['/after', 'after', []],
    ])
  })

  it('joins a group prefix and the route path "/" into the prefix alone', () => {
    expect(onlyRoute((r) => r.group({ prefix: '/api/' }, (r) => r.get('/', handler))).path).toBe(
      '/api',
    )
  })

  it('rejects a group without a callback with FW_PATTERN_INVALID', () => {
    const r = new Registrar()
    const call = () => r.group({ prefix: '/api' }, undefined as never)
    expect(call).toThrow(/group\(\) needs a callback/)
    try {
      call()
    } catch (error) {
      expect((error as FwError).code).toBe('FW_PATTERN_INVALID')
    }
  })
})

describe('scopes', () => {
  it('records the chain of group scopes from the file (0) inwards', () => {
    const { routes } = collectRoutes((r) => {
      r.get('/top', handler)
      r.group({ prefix: '/a' }, (r) => {
        r.get('/1', handler)
        r.group({ prefix: '/b' }, (r) => r.get('/2', handler))
        r.get('/3', handler)
      })
      r.group({ prefix: '/c' }, (r) => r.get('/4', handler))
    })
    expect(routes.map((route) => [route.path, route.scopes])).toEqual([
      ['/top', [0]],
      ['/a/1', [0, 1]],
      ['/a/b/2', [0, 1, 2]],
      ['/a/3', [0, 1]],
      ['/c/4', [0, 3]],
    ])
  })
})

describe('alias()', () => {
  it('registers a custom middleware alias by name and chains', () => {
    const tenant: Middleware = (req, next) => next(req)
    const audit: Middleware = (req, next) => next(req)
    const r = new Registrar()
    expect(r.alias('tenant', tenant).alias('audit', audit)).toBe(r)
    expect([...r.aliases.entries()]).toEqual([
      ['tenant', tenant],
      ['audit', audit],
    ])
  })

  it('lets a later alias() replace an earlier one of the same name', () => {
    const r = new Registrar()
    r.alias('tenant', pass).alias('tenant', passToo)
    expect(r.aliases.get('tenant')).toBe(passToo)
  })
})

describe('joinPaths', () => {
  it.each([
    ['/api/', '/x', '/api/x'],
    ['/api', '/x', '/api/x'],
    ['/api', 'x', '/api/x'],
    ['/api', '/', '/api'],
    ['/api/', '', '/api'],
    ['/api//', '/x', '/api/x'],
    ['', '', '/'],
    ['', '/', '/'],
    ['', '/x', '/x'],
    ['/', '/x', '/x'],
    ['/api', '/x/', '/api/x/'],
  ])('joinPaths(%j, %j) is %j', (prefix, path, expected) => {
    expect(joinPaths(prefix, path)).toBe(expected)
  })
})

describe('defineRoutes and collectRoutes', () => {
  it('defineRoutes returns its argument unchanged', () => {
    const register = (r: Registrar) => {
      r.get('/', handler)
    }
    expect(defineRoutes(register)).toBe(register)
  })

  it('collectRoutes runs the function against a fresh registrar', () => {
    const register = defineRoutes((r) => {
      r.get('/', handler, 'home')
      r.alias('tenant', pass)
    })
    const first = collectRoutes(register)
    const second = collectRoutes(register)
    expect(first).not.toBe(second)
    expect(second.routes).toHaveLength(1)
    expect(second.aliases.has('tenant')).toBe(true)
  })

  it('records no source location unless asked to', () => {
    expect(onlyRoute((r) => r.get('/', handler)).location).toBeUndefined()
  })

  it('records the file and line of a registration when asked to', () => {
    const { routes } = collectRoutes((r) => r.get('/', handler), { captureLocations: true })
    expect(routes[0]!.location).toMatchObject({
      file: expect.stringContaining('registrar.test.ts'),
    })
    expect(routes[0]!.location!.line).toBeGreaterThan(0)
  })
})
