// Express 5 with its defaults (ETag on, X-Powered-By on). Express 5 (path-to-regexp 8) has no
// param regexes: a guard first in the route's chain passes non-int ids to the next route
// (`next('route')`, hence 404), as the other routers' constraints do. Express middleware call
// next() rather than await it.

import express from 'express'
import { toSyntax } from '../../lib/route-set.mjs'
import { FILLER_ROUTES, PARAM_ROUTE } from '../scenarios.mjs'

const INT = /^\d+$/
const intId = (req, res, next) => (INT.test(req.params.id) ? next() : next('route'))
const noop1 = (req, res, next) => next()
const noop2 = (req, res, next) => next()
const noop3 = (req, res, next) => next()

const params = (req, res) => res.json({ id: Number(req.params.id), slug: req.params.slug })

export async function start({ app: appId, host }) {
  const app = express()
  if (appId === 'large') {
    for (const route of FILLER_ROUTES) {
      app[route.method.toLowerCase()](toSyntax(route, 'plain'), (req, res) => res.json({}))
    }
    app.get(PARAM_ROUTE.express, intId, noop1, noop2, noop3, params)
  } else {
    app.get('/hello', (req, res) => res.json({ hello: 'world' }))
    app.get(PARAM_ROUTE.express, intId, noop1, noop2, noop3, params)
    app.post('/echo', express.json(), (req, res) => res.json(req.body))
  }
  const server = await new Promise((resolve) => {
    const s = app.listen(0, host, () => resolve(s))
  })
  return server.address().port
}
