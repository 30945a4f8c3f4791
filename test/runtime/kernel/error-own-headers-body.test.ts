/**
 * An error's own headers and body fields are sent, but cannot undo what every error response
 * carries: Cache-Control: no-store and X-Content-Type-Options: nosniff (a cacheable error could be
 * served to other users by a shared cache), nor replace the boundary's `code`, `status` and
 * `request_id`.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import { bootKernel, call, cleanupTempDirs, jsonOf, serve } from './support.js'

afterAll(cleanupTempDirs)

const routes = (r: any): void => {
  r.get('/cached', () => {
    throw new HttpError(400, {
      headers: { 'Cache-Control': 'public, max-age=3600', 'x-content-type-options': 'sniff' },
    })
  })
  r.get('/cached-lower', () => {
    throw new HttpError(400, { headers: { 'cache-control': 'public', 'x-extra': 'kept' } })
  })
  r.get('/body', () => {
    throw new HttpError(400, {
      body: { code: 999, request_id: 'fake', status: 999, error_description: 'kept' },
    })
  })
  r.get('/big', () => {
    throw new HttpError(400, { body: { n: 1n } })
  })
}

describe("an error's own headers", () => {
  it('never replace no-store and nosniff, over HTTP', async () => {
    const served = await serve(await bootKernel(routes))
    try {
      for (const path of ['/cached', '/cached-lower']) {
        const reply = await served.send('GET', path)
        expect({ path, status: reply.status, cache: reply.headers['cache-control'] }).toEqual({
          path,
          status: 400,
          cache: 'no-store',
        })
        expect(reply.headers['x-content-type-options']).toBe('nosniff')
      }
      expect((await served.send('GET', '/cached-lower')).headers['x-extra']).toBe('kept')
    } finally {
      await served.close()
    }
  })
})

describe("an error's body fields", () => {
  it('are added, but never replace code or request_id (JSON)', async () => {
    const kernel = await bootKernel(routes)
    const response = await call(kernel, { uri: '/body', headers: { 'x-request-id': 'real-id' } })
    expect(await jsonOf(response)).toEqual({
      error: 'Bad Request',
      code: 400,
      request_id: 'real-id',
      status: 999,
      error_description: 'kept',
    })
  })

  it('never replace status or request_id (problem+json), nor add a request_id there is none of', async () => {
    const kernel = await bootKernel(routes, { builtins: false })
    const response = await call(kernel, {
      uri: '/body',
      headers: { accept: 'application/problem+json' },
    })
    const body = await jsonOf(response)
    expect(body).toMatchObject({ status: 400, code: 999, error_description: 'kept' })
    expect(body).not.toHaveProperty('request_id')
  })

  it('that cannot be serialized are left out instead of failing the answer', async () => {
    const kernel = await bootKernel(routes, { builtins: false })
    const response = await call(kernel, '/big')
    expect(response.status).toBe(400)
    expect(await jsonOf(response)).toEqual({ error: 'Bad Request', code: 400 })
  })
})
