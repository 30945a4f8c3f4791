// One HTTP benchmark server for bench/http/instructions.mjs, run under valgrind:
//   node instructions-server.mjs <server-id> <app> [fw cache dir]
// Listens on 127.0.0.1 (port 0) and prints "ready <port>"; exits on SIGTERM, so callgrind
// writes its final dump.

import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SERVERS } from './scenarios.mjs'

const [serverId, app, fwCache] = process.argv.slice(2)
const server = SERVERS.find((s) => s.id === serverId)
if (!server) throw new Error(`unknown server ${serverId}`)
const { start } = await import(
  pathToFileURL(join(import.meta.dirname, 'servers', server.module)).href
)
const port = await start({
  app,
  host: '127.0.0.1',
  ...server.options,
  fwCache: fwCache || undefined,
})
process.on('SIGTERM', () => process.exit(0))
console.log(`ready ${port}`)
