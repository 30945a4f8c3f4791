/**
 * Audit 6 of the template views, over real HTTP: a value in an unquoted attribute
 * (`<a title={{ v }}>`) could add attributes of its own, an event handler included, since `=`
 * went out as it was. `=` and the backtick are now escaped too (as Handlebars does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { view } from '../../src/runtime/response.js'
import { TemplateViews } from '../../src/runtime/views.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from '../runtime/kernel/support.js'

let server: Served

beforeAll(async () => {
  const views = new TemplateViews({
    templates: { link: '<a title={{ v }} href="/s?q={{ v }}">{{ v }}</a>{{{ v }}}' },
  })
  server = await serve(
    await bootKernel(
      (r) => r.get('/link', (req: FwRequest) => view('link', { v: req.query('v') })),
      {
        views,
      },
    ),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('escaped view values', () => {
  it('cannot add an attribute to an unquoted attribute value', async () => {
    const value = 'x onmouseover=alert(1) `y`'
    const reply = await server.send('GET', `/link?v=${encodeURIComponent(value)}`)
    expect(reply.status).toBe(200)
    const escaped = 'x onmouseover&#61;alert(1) &#96;y&#96;'
    expect(reply.text).toBe(`<a title=${escaped} href="/s?q=${escaped}">${escaped}</a>${value}`)
  })
})
