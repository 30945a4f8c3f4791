// The production server: the compiled route cache plus the runtime, nothing else (no compiler,
// bundler or CLI). Build the cache first: `npx fw route:cache build`.
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { Kernel, answerClientError, createListener } from 'fw/runtime'
import register from './.fw/cache/routes.mjs'

// The cache beside this file, so `node my-app/server.mjs` works from any folder.
const routeCache = fileURLToPath(new URL('./.fw/cache', import.meta.url))
const kernel = await Kernel.boot({ routeCache, register })
const server = createServer(createListener(() => kernel))
// "Expect: 100-continue" uploads: the 100 only once the body is read (a refused request never uploads).
server.on('checkContinue', createListener(() => kernel, { expectContinue: true }))
// Requests Node cannot parse (oversized headers, malformed): a JSON error like every other.
server.on('clientError', answerClientError)
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const { port } = server.address()
  console.log(`listening on http://${process.env.HOST ?? '127.0.0.1'}:${port}`)
})
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close())
