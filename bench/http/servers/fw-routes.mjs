// fw's two apps as routes files (compiled by `fw route:cache build`, then passed to
// Kernel.boot as `register`). Handlers receive the request, then the route params by position.

import { json } from '../../../dist/runtime/response.js'
import { toSyntax } from '../../lib/route-set.mjs'
import { FILLER_ROUTES, PARAM_ROUTE } from '../scenarios.mjs'

// The three no-op middleware: each just awaits the rest of the pipeline.
async function noop1(request, next) {
  return await next(request)
}
async function noop2(request, next) {
  return await next(request)
}
async function noop3(request, next) {
  return await next(request)
}
const middleware = [noop1, noop2, noop3]

const hello = () => json({ hello: 'world' })
const params = (request, id, slug) => json({ id, slug }) // id is a number (the int constraint)
const echo = (request) => json(request.getParsedBody())
const filler = () => json({})

export function small(r) {
  r.get('/hello', hello, 'hello')
  r.get(PARAM_ROUTE.fw, params, { name: 'posts.show', middleware })
  r.post('/echo', echo, 'echo')
}

export function large(r) {
  FILLER_ROUTES.forEach((route, i) => {
    r[route.method.toLowerCase()](toSyntax(route, 'fw'), filler, `r${i}`)
  })
  r.get(PARAM_ROUTE.fw, params, { name: 'posts.show', middleware })
}
