// Fastify 5, logger off, no schemas (the body is serialized with JSON.stringify). The 3 no-op
// middleware are 3 async preHandler hooks: Fastify's hooks run in sequence, they do not wrap
// the handler, so "await next()" has no direct equivalent.

import Fastify from 'fastify'
import { toSyntax } from '../../lib/route-set.mjs'
import { FILLER_ROUTES, PARAM_ROUTE } from '../scenarios.mjs'

async function noop1() {}
async function noop2() {}
async function noop3() {}
const preHandler = [noop1, noop2, noop3]

const params = async (request) => ({ id: Number(request.params.id), slug: request.params.slug })

export async function start({ app, host }) {
  const server = Fastify({ logger: false })
  if (app === 'large') {
    for (const route of FILLER_ROUTES) {
      server.route({
        method: route.method,
        url: toSyntax(route, 'plain'),
        handler: async () => ({}),
      })
    }
    server.get(PARAM_ROUTE.fastify, { preHandler }, params)
  } else {
    server.get('/hello', async () => ({ hello: 'world' }))
    server.get(PARAM_ROUTE.fastify, { preHandler }, params)
    server.post('/echo', async (request) => request.body)
  }
  await server.listen({ port: 0, host })
  return server.server.address().port
}
