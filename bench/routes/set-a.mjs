// Route set (a): the GitHub, Parse.com and Google+ APIs of the Go routing benchmark, merged,
// plus three routes of ours with an int param, a regex param and a catch-all. Also the lookups
// ("cases") timed against it. Params are `:name`, a catch-all is `*name`; `constraints` maps a
// param to 'int' or to a regex source (routers without constraints register a plain param).

import { githubAPI, gplusAPI, parseAPI } from './go-http-routing.mjs'

// The three lists share no method+path and no first segment (Parse lives under /1, Google+
// under /people, /activities, /comments, /moments), so no /parse or /gplus prefix is needed;
// checkRouteSet() in lib/route-set.mjs verifies that at startup.
const extraRoutes = [
  { method: 'GET', path: '/ext/items/:id', constraints: { id: 'int' } },
  { method: 'GET', path: '/ext/codes/:code', constraints: { code: '[A-Z]{3}' } },
  { method: 'GET', path: '/ext/files/*path' },
]

export const routes = [...githubAPI, ...parseAPI, ...gplusAPI, ...extraRoutes]

// `route` names the route expected to match ([method, pattern]); null means a miss.
export const cases = [
  { name: 'short static', method: 'GET', path: '/user', route: ['GET', '/user'] },
  {
    name: 'deep static',
    method: 'GET',
    path: '/search/repositories',
    route: ['GET', '/search/repositories'],
  },
  {
    name: 'one param',
    method: 'GET',
    path: '/users/julienschmidt',
    route: ['GET', '/users/:user'],
    params: { user: 'julienschmidt' },
  },
  {
    name: 'several params',
    method: 'GET',
    path: '/repos/julienschmidt/httprouter/issues/42/comments',
    route: ['GET', '/repos/:owner/:repo/issues/:number/comments'],
    params: { owner: 'julienschmidt', repo: 'httprouter', number: '42' },
  },
  {
    name: 'int param',
    method: 'GET',
    path: '/ext/items/12345',
    route: ['GET', '/ext/items/:id'],
    params: { id: '12345' },
  },
  {
    name: 'regex param',
    method: 'GET',
    path: '/ext/codes/ABC',
    route: ['GET', '/ext/codes/:code'],
    params: { code: 'ABC' },
  },
  {
    name: 'catch-all',
    method: 'GET',
    path: '/ext/files/docs/2024/report.pdf',
    route: ['GET', '/ext/files/*path'],
    params: { path: 'docs/2024/report.pdf' },
  },
  { name: 'miss', method: 'GET', path: '/repos/julienschmidt/httprouter/nope', route: null },
]

export default {
  id: 'a',
  title: 'GitHub + Parse + Google+ API (Go routing benchmark) + 3 extra routes',
  routes,
  cases,
}
