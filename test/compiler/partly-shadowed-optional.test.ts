/**
 * A route with an optional parameter is refused only when every path it matches is taken first.
 * Regression: `/u/{id}` then `/u/{name?}` failed with FW_ROUTE_SHADOWED ("can never match"),
 * though the second is the only route for `/u`; likewise `/v` then `/v/{name?}`, whose long form
 * still answers `/v/x`.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, compileRoutes, noop } from '../support/compile.js'

afterAll(() => cleanupTempDirs())

describe('an optional route partly covered by earlier routes', () => {
  it('builds, and answers the paths no earlier route takes', async () => {
    const m = await compileRoutes((r) => {
      r.get('/u/{id}', noop, 'u.id')
      r.get('/u/{name?}', noop, 'u.name')
      r.get('/v', noop, 'v')
      r.get('/v/{name?}', noop, 'v.name')
    })
    expect(m.match('GET', '/u/x')).toMatchObject({ route: { name: 'u.id' }, params: { id: 'x' } })
    expect(m.match('GET', '/u')).toMatchObject({
      route: { name: 'u.name' },
      params: { name: null },
    })
    expect(m.match('GET', '/v')).toMatchObject({ route: { name: 'v' } })
    expect(m.match('GET', '/v/x')).toMatchObject({
      route: { name: 'v.name' },
      params: { name: 'x' },
    })
  })

  it('is still refused when wholly covered', async () => {
    await expect(
      compileRoutes((r) => {
        r.get('/u/{id}', noop)
        r.get('/u/{name}', noop)
      }),
    ).rejects.toMatchObject({ code: 'FW_ROUTE_SHADOWED' })
  })
})
