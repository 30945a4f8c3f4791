// The production server: the compiled route cache plus the runtime, nothing else (no compiler,
// bundler or CLI). Build the cache first: `npx fw route:cache build`.
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { Kernel, attachKernel } from 'fw/runtime'

// The cache beside this file, so `node my-app/server.mjs` works from any folder.
const routeCache = fileURLToPath(new URL('./.fw/cache', import.meta.url))
if (!existsSync(`${routeCache}/routes.mjs`))
  fail(`no route cache in ${routeCache}: run \`npx fw route:cache build\` first`)
const { default: register } = await import('./.fw/cache/routes.mjs')
const kernel = await Kernel.boot({ routeCache, register })
// Requests, "Expect: 100-continue" uploads (the 100 only once the body is read) and what Node
// cannot parse or would answer itself (malformed, oversized, no Host, CONNECT): JSON errors.
const server = attachKernel(createServer(), () => kernel)
const host = process.env.HOST ?? '127.0.0.1'
// Decimal digits only, as `fw serve` takes it: Number() would read ' ' as 0 (a random port) and
// 0x1F90 as 8080.
const port = Number(process.env.PORT || 3000)
if (!/^\d{1,5}$/.test(process.env.PORT || '3000') || port > 65535)
  fail(`PORT=${process.env.PORT} is not a port number (0 to 65535, in decimal)`)
server.once('error', (error) => fail(`cannot listen on ${host}:${port}: ${error.message}`))
server.listen(port, host, () => {
  console.log(`listening on http://${host}:${server.address().port}`)
})
// Finish the requests in flight, then exit.
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close())

function fail(message) {
  console.error(`error ${message}`)
  process.exit(1)
}
