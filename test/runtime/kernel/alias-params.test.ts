/**
 * A function registered with r.alias gets the parameters of each use after `next`, as Laravel's
 * handle($request, $next, ...$params): `tenant:acme` → (req, next, 'acme'). They were dropped,
 * so `tenant:acme` and `tenant:globex` ran alike, and an alias string naming such an alias
 * (`r.alias('acme', 'tenant:acme')`) passes its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import type { Next } from '../../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

let server: Served

beforeAll(async () => {
  const kernel = await bootKernel((r) => {
    r.alias('tenant', async (request: FwRequest, next: Next, ...params: string[]) =>
      (await next(request)).withHeader('x-tenant', params.length ? params.join('+') : '(none)'),
    )
    r.alias('acme', 'tenant:acme')
    r.get('/one', () => 'ok', { middleware: ['tenant:acme'] })
    r.get('/two', () => 'ok', { middleware: ['tenant:acme,eu'] })
    r.get('/bare', () => 'ok', { middleware: ['tenant'] })
    r.get('/through', () => 'ok', { middleware: ['acme'] })
    r.get('/replaced', () => 'ok', { middleware: ['acme:globex'] })
  })
  server = await serve(kernel)
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('a function alias used with parameters', () => {
  it.each([
    ['/one', 'acme'],
    ['/two', 'acme+eu'],
    ['/bare', '(none)'],
    ['/through', 'acme'],
    ['/replaced', 'globex'],
  ])('%s passes %s', async (path, tenant) => {
    const reply = await server.send('GET', path)
    expect(reply.status).toBe(200)
    expect(reply.headers['x-tenant']).toBe(tenant)
  })
})
