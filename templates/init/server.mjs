// The production server: the compiled route cache plus the runtime, nothing else (no compiler,
// bundler or CLI). Build the cache first: `npx fw route:cache build`.
import { existsSync } from 'node:fs'
import { createServer, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import { Kernel, attachKernel } from 'fw/runtime'

// The cache beside this file, so `node my-app/server.mjs` works from any folder.
const routeCache = fileURLToPath(new URL('./.fw/cache', import.meta.url))
if (!existsSync(`${routeCache}/routes.mjs`))
  fail(`no route cache in ${routeCache}: run \`npx fw route:cache build\` first`)
const { default: register } = await import('./.fw/cache/routes.mjs')
// Add `accessLog: true` for a line per answered request in the log (method, path, status, time,
// request id, client address), as `fw serve --access-log` prints.
const kernel = await Kernel.boot({ routeCache, register }).catch(bootFailed)
// Once stopping, each response says `Connection: close` and its connection closes after it: a
// keep-alive client kept busy (a load balancer's pool) would otherwise keep the process serving.
let stopping = false
class Response extends ServerResponse {
  writeHead(...args) {
    if (stopping) this.shouldKeepAlive = false
    return super.writeHead(...args)
  }
}
// Requests, "Expect: 100-continue" uploads (the 100 only once the body is read) and what Node
// cannot parse or would answer itself (malformed, oversized, no Host, CONNECT): JSON errors.
// The timeouts of `fw serve`: 20 s for a request's headers (slowloris), 60 s in all, checked
// every 2 s; idle keep-alive connections kept 65 s, longer than a load balancer's 60 s.
const server = attachKernel(
  createServer({
    ServerResponse: Response,
    headersTimeout: 20_000,
    requestTimeout: 60_000,
    connectionsCheckingInterval: 2_000,
  }),
  () => kernel,
)
server.keepAliveTimeout = 65_000
// An empty HOST (a compose file's unset ${HOST}) is unset, as --host '' is refused by fw serve.
const host = process.env.HOST || '127.0.0.1'
// Decimal digits only, as `fw serve` takes it: Number() would read ' ' as 0 (a random port) and
// 0x1F90 as 8080.
const port = Number(process.env.PORT || 3000)
if (!/^\d{1,5}$/.test(process.env.PORT || '3000') || port > 65535)
  fail(`PORT=${process.env.PORT} is not a port number (0 to 65535, in decimal)`)
// An IPv6 address in brackets, as a URL writes it (`http://[::1]:3000`, not `http://::1:3000`).
const shownHost = host.includes(':') ? `[${host}]` : host
server.once('error', (error) => fail(`cannot listen on ${shownHost}:${port}: ${error.message}`))
server.listen(port, host, () => {
  console.log(`listening on http://${shownHost}:${server.address().port}`)
})
// Finish the requests in flight (for up to 10 s), then exit.
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, stop)

function stop() {
  stopping = true
  // Then the connections fw opened (the throttle's and the revocation list's Redis, the user
  // database's pool): left open, they kept the process running after the drain, for good.
  server.close(() => void closeConnections())
  // Keep-alive connections turn idle as their last response ends: close them as they do.
  setInterval(() => server.closeIdleConnections(), 50).unref()
  setTimeout(() => server.closeAllConnections(), 10_000).unref()
}

async function closeConnections() {
  // What the app left open besides is given 5 s, as `fw serve` does.
  setTimeout(() => process.exit(), 5_000).unref()
  // Loaded only now: an app without throttle or auth never loads either module. A failure here
  // has no one left to answer: the exit above still comes.
  await Promise.allSettled([
    import('fw/throttle').then(({ closeDefaultThrottle }) => closeDefaultThrottle()),
    import('fw/auth').then(({ closeDefaultAuth }) => closeDefaultAuth()),
  ])
}

// What fw refuses at boot (a misspelt option, a cache built from other routes) is said as
// `fw serve` says it, without a stack; anything else (an app's own code throwing) keeps its stack.
function bootFailed(error) {
  if (!/^FW_/.test(error?.code)) throw error
  fail(`${error.message} [${error.code}]${error.hint ? `\n  hint: ${error.hint}` : ''}`)
}

function fail(message) {
  console.error(`error ${message}`)
  process.exit(1)
}
