/**
 * The positional group() takes its middleware as a list or as one function (the spec's
 * "middleware array/closure"), before a name prefix and the callback. The first function was
 * taken for the callback, so `group('/api', null, auth, 'api.', cb)` failed with "2 argument(s)
 * after the callback" although its TypeScript overloads accept it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import type { Middleware } from '../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from '../runtime/kernel/support.js'

const tag: Middleware = async (request, next) => (await next(request)).withHeader('x-tag', 'api')
const routes = (r: Registrar): void => {
  r.group('/api', null, tag, 'api.', (r) => r.get('/users', () => ({ users: [] }), 'users'))
  r.group('/v2', null, tag, (r) => r.get('/ping', () => ({ pong: true }), 'ping'))
  r.group('/plain', null, (r) => r.get('/x', () => ({ x: 1 }), 'plain'))
}

let server: Served

beforeAll(async () => {
  server = await serve(await bootKernel(routes))
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('group(prefix, domain, middlewareFunction, namePrefix?, callback)', () => {
  it('registers the routes with the function as their middleware and the name prefix', () => {
    const registered = collectRoutes(routes).routes
    expect(registered.map((r) => [r.path, r.name, r.middleware])).toEqual([
      ['/api/users', 'api.users', [tag]],
      ['/v2/ping', 'ping', [tag]],
      ['/plain/x', 'plain', []],
    ])
  })

  it('runs the function around the group’s routes over HTTP', async () => {
    const users = await server.send('GET', '/api/users')
    expect(users.status).toBe(200)
    expect(users.headers['x-tag']).toBe('api')
    expect(JSON.parse(users.text)).toEqual({ users: [] })
    expect((await server.send('GET', '/v2/ping')).headers['x-tag']).toBe('api')
    const plain = await server.send('GET', '/plain/x')
    expect(plain.status).toBe(200)
    expect(plain.headers['x-tag']).toBeUndefined()
  })
})
