/**
 * The HTTP server host used by `fw serve`: sensible timeouts, a graceful drain on SIGTERM/SIGINT,
 * and a kernel reference that `--watch` can swap between requests.
 */
import { createServer, type Server } from 'node:http'
import { FwError } from '../shared/errors.js'
import type { Kernel } from '../runtime/kernel.js'
import { createListener } from '../runtime/node-adapter.js'

export interface RunningServer {
  server: Server
  url: string
  /** Replaces the kernel for new requests; in-flight ones finish on the old one. */
  swap(kernel: Kernel): void
  /** Stops accepting connections and resolves when in-flight requests are done. */
  close(): Promise<void>
}

/** Starts listening; a port in use is a user error naming the port. */
export async function startServer(kernel: Kernel, options: { port: number; host: string }): Promise<RunningServer> {
  let current = kernel
  const server = createServer(createListener(() => current))
  server.on('checkContinue', createListener(() => current, { expectContinue: true }))
  // Keep-alive a little longer than common proxies' idle timeouts; bound slow headers/bodies.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  server.requestTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new FwError('FW_SERVE_PORT', `Port ${options.port} on ${options.host} is already in use`, { hint: 'Stop the other server or pass --port with a free port.' }))
      } else reject(error)
    })
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    server,
    url: `http://${shownHost}:${port}`,
    swap: (next) => {
      current = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Keep-alive connections turn idle as their last response ends: close them as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 50)
        server.close(() => {
          clearInterval(sweep)
          resolve()
        })
        server.closeIdleConnections()
      }),
  }
}
