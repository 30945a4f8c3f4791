// Hono 4 (default router: SmartRouter) on @hono/node-server's adaptor server.

import { createAdaptorServer } from '@hono/node-server'
import { Hono } from 'hono'
import { toSyntax } from '../../lib/route-set.mjs'
import { FILLER_ROUTES, PARAM_ROUTE } from '../scenarios.mjs'

const noop1 = async (c, next) => {
  await next()
}
const noop2 = async (c, next) => {
  await next()
}
const noop3 = async (c, next) => {
  await next()
}

const params = (c) => c.json({ id: Number(c.req.param('id')), slug: c.req.param('slug') })

export async function start({ app: appId, host }) {
  const app = new Hono()
  if (appId === 'large') {
    for (const route of FILLER_ROUTES) {
      app.on(route.method, toSyntax(route, 'hono'), (c) => c.json({}))
    }
    app.get(PARAM_ROUTE.hono, noop1, noop2, noop3, params)
  } else {
    app.get('/hello', (c) => c.json({ hello: 'world' }))
    app.get(PARAM_ROUTE.hono, noop1, noop2, noop3, params)
    app.post('/echo', async (c) => c.json(await c.req.json()))
  }
  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise((resolve) => server.listen(0, host, resolve))
  return server.address().port
}
