// Route set (b): the 12 routes of Hono's router benchmark (honojs/hono benchmarks/routers,
// `routes` in src/tool.mts) and its 7 lookups (src/bench.mts), plus a miss. Hono registers the
// last route as `/static/*`; here it is a named catch-all so every router reports it the same way.

export const routes = [
  { method: 'GET', path: '/user' },
  { method: 'GET', path: '/user/comments' },
  { method: 'GET', path: '/user/avatar' },
  { method: 'GET', path: '/user/lookup/username/:username' },
  { method: 'GET', path: '/user/lookup/email/:address' },
  { method: 'GET', path: '/event/:id' },
  { method: 'GET', path: '/event/:id/comments' },
  { method: 'POST', path: '/event/:id/comment' },
  { method: 'GET', path: '/map/:location/events' },
  { method: 'GET', path: '/status' },
  { method: 'GET', path: '/very/deeply/nested/route/hello/there' },
  { method: 'GET', path: '/static/*path' },
]

export const cases = [
  { name: 'short static', method: 'GET', path: '/user', route: ['GET', '/user'] },
  {
    name: 'static, same radix',
    method: 'GET',
    path: '/user/comments',
    route: ['GET', '/user/comments'],
  },
  {
    name: 'deep static',
    method: 'GET',
    path: '/very/deeply/nested/route/hello/there',
    route: ['GET', '/very/deeply/nested/route/hello/there'],
  },
  {
    name: 'one param',
    method: 'GET',
    path: '/user/lookup/username/hey',
    route: ['GET', '/user/lookup/username/:username'],
    params: { username: 'hey' },
  },
  {
    name: 'param + static',
    method: 'GET',
    path: '/event/abcd1234/comments',
    route: ['GET', '/event/:id/comments'],
    params: { id: 'abcd1234' },
  },
  {
    name: 'POST param',
    method: 'POST',
    path: '/event/abcd1234/comment',
    route: ['POST', '/event/:id/comment'],
    params: { id: 'abcd1234' },
  },
  {
    name: 'catch-all',
    method: 'GET',
    path: '/static/index.html',
    route: ['GET', '/static/*path'],
    params: { path: 'index.html' },
  },
  { name: 'miss', method: 'GET', path: '/user/lookup/phone/123', route: null },
]

export default {
  id: 'b',
  title: "Hono's router benchmark (12 routes)",
  routes,
  cases,
}
