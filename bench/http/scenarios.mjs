// The HTTP benchmark's scenarios, the two apps every server implements, and the servers.
//
// Apps (each server process runs one):
//   small  GET /hello, GET /api/v1/users/{id:int}/posts/{slug} (3 no-op middleware), POST /echo
//   large  the GitHub, Parse.com and Google+ API routes of the Go routing benchmark
//          (bench/routes/go-http-routing.mjs, 242 routes, each answering `{}`), then the
//          scenario route (with its 3 middleware) registered LAST: 243 routes.
//
// Every request carries `x-forwarded-proto: https`, as behind a TLS-terminating proxy on
// loopback: fw runs with APP_ENV=production, whose built-in HTTPS redirect would otherwise
// answer 301. The other servers ignore the header.

import { githubAPI, gplusAPI, parseAPI } from '../routes/go-http-routing.mjs'

// The filler routes of the large app, in the neutral `:param` syntax of bench/routes/.
export const FILLER_ROUTES = [...githubAPI, ...parseAPI, ...gplusAPI]

// The scenario route in each syntax (id is an int: 1+ digits; fw's `int` takes 1–15).
export const PARAM_ROUTE = {
  fw: '/api/v1/users/{id:int}/posts/{slug}',
  fastify: '/api/v1/users/:id(^\\d+$)/posts/:slug',
  hono: '/api/v1/users/:id{[0-9]+}/posts/:slug',
  express: '/api/v1/users/:id/posts/:slug', // Express 5 has no param regexes: a guard checks id
}

// A JSON body of about 1 KB (1,0xx bytes), the same bytes on every run.
function echoBody() {
  const items = []
  for (let i = 0; items.length < 14; i++) {
    items.push({
      id: 1000 + i,
      name: `item-${i}`,
      price: 9.5 + i,
      tags: ['a', 'b'],
      ok: i % 2 === 0,
    })
  }
  const body = JSON.stringify({ user: { id: 42, name: 'Ada Lovelace', roles: ['admin'] }, items })
  if (body.length < 1000 || body.length > 1100) throw new Error(`echo body is ${body.length} bytes`)
  return body
}

export const ECHO_BODY = echoBody()

const FORWARDED = { 'x-forwarded-proto': 'https' }

export const SCENARIOS = [
  {
    id: 'hello',
    title: 'GET /hello → {"hello":"world"}',
    app: 'small',
    method: 'GET',
    path: '/hello',
    headers: FORWARDED,
    expected: '{"hello":"world"}',
  },
  {
    id: 'params',
    title: 'GET /api/v1/users/{id:int}/posts/{slug} behind 3 no-op middleware → the params',
    app: 'small',
    method: 'GET',
    path: '/api/v1/users/42/posts/hello-world',
    headers: FORWARDED,
    expected: '{"id":42,"slug":"hello-world"}',
    notFound: '/api/v1/users/x42/posts/hello-world',
  },
  {
    id: 'routes',
    title: `the same route and middleware among ${FILLER_ROUTES.length + 1} routes`,
    app: 'large',
    method: 'GET',
    path: '/api/v1/users/42/posts/hello-world',
    headers: FORWARDED,
    expected: '{"id":42,"slug":"hello-world"}',
    notFound: '/api/v1/users/x42/posts/hello-world',
  },
  {
    id: 'echo',
    title: `POST /echo with a ${ECHO_BODY.length}-byte JSON body → the parsed body`,
    app: 'small',
    method: 'POST',
    path: '/echo',
    headers: { ...FORWARDED, 'content-type': 'application/json' },
    body: ECHO_BODY,
    expected: ECHO_BODY,
  },
]

// Each server runs in its own child process (bench/http/server-child.mjs): `module` is the file
// in bench/http/servers/ and `options` what its start() receives besides the app.
export const SERVERS = [
  { id: 'node', label: 'node:http (bare)', module: 'bare.mjs', pkg: null },
  { id: 'fw', label: 'fw', module: 'fw.mjs', pkg: 'fw', options: { builtins: true } },
  {
    id: 'fw-nobuiltins',
    label: 'fw (builtins off)',
    module: 'fw.mjs',
    pkg: 'fw',
    options: { builtins: false },
  },
  { id: 'fastify', label: 'Fastify', module: 'fastify.mjs', pkg: 'fastify' },
  { id: 'hono', label: 'Hono (@hono/node-server)', module: 'hono.mjs', pkg: 'hono' },
  { id: 'express', label: 'Express', module: 'express.mjs', pkg: 'express' },
]

export const APPS = ['small', 'large']
