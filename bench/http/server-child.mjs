// One server in its own process: `node server-child.mjs <server-id> <app> [json options]`.
// Starts the server on 127.0.0.1, port 0, and talks to the parent over IPC:
//   → { type: 'ready', port }          once listening
//   ← { type: 'cpu-start' }            → { type: 'cpu-started' }
//   ← { type: 'cpu-stop' }             → { type: 'cpu', user, system } (µs since cpu-start)
//   ← { type: 'exit' }                 exits normally (so --cpu-prof writes its profile)
// The load generator never runs here.

import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SERVERS } from './scenarios.mjs'

const [serverId, app, json = '{}'] = process.argv.slice(2)
const server = SERVERS.find((s) => s.id === serverId)
if (!server) throw new Error(`unknown server ${serverId}`)

const modulePath = pathToFileURL(join(import.meta.dirname, 'servers', server.module)).href
const { start } = await import(modulePath)
const port = await start({ app, host: '127.0.0.1', ...server.options, ...JSON.parse(json) })

let since = null
process.on('message', (message) => {
  if (message.type === 'cpu-start') {
    since = process.cpuUsage()
    process.send({ type: 'cpu-started' })
  } else if (message.type === 'cpu-stop') {
    const { user, system } = process.cpuUsage(since)
    process.send({ type: 'cpu', user, system })
  } else if (message.type === 'exit') {
    process.exit(0)
  }
})
process.on('disconnect', () => process.exit(0))
process.send({ type: 'ready', port })
