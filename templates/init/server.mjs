// The production server: the compiled route cache plus the runtime, nothing else (no compiler,
// bundler or CLI). Build the cache first: `npx fw route:cache build`.
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { Kernel, attachKernel } from 'fw/runtime'
import register from './.fw/cache/routes.mjs'

// The cache beside this file, so `node my-app/server.mjs` works from any folder.
const routeCache = fileURLToPath(new URL('./.fw/cache', import.meta.url))
const kernel = await Kernel.boot({ routeCache, register })
// Requests, "Expect: 100-continue" uploads (the 100 only once the body is read) and what Node
// cannot parse or would answer itself (malformed, oversized, no Host, CONNECT): JSON errors.
const server = attachKernel(createServer(), () => kernel)
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const { port } = server.address()
  console.log(`listening on http://${process.env.HOST ?? '127.0.0.1'}:${port}`)
})
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close())
