// fw: Kernel.boot on the compiled route cache of the app, node:http via createListener.
// APP_ENV=production (set by the parent for every server), so with builtins on a request runs
// the production defaults: HTTPS redirect (satisfied by x-forwarded-proto from loopback),
// client_ip, request_id (echoed as x-request-id) and trace. `builtins: false` drops all four.

import http from 'node:http'
import { Kernel, createListener, silentLogger } from '../../../dist/runtime/index.js'
import { large, small } from './fw-routes.mjs'

export async function start({ app, host, fwCache, builtins }) {
  const register = app === 'large' ? large : small
  const kernel = await Kernel.boot({ routeCache: fwCache, register, log: silentLogger, builtins })
  const server = http.createServer(createListener(() => kernel))
  await new Promise((resolve) => server.listen(0, host, resolve))
  return server.address().port
}
