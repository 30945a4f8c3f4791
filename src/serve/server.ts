/**
 * The HTTP server host used by `fw serve`: sensible timeouts, a graceful drain on SIGTERM/SIGINT,
 * and a kernel reference that `--watch` can swap between requests.
 */
import { createServer, type Server } from 'node:http'
import { FwError } from '../shared/errors.js'
import type { Kernel } from '../runtime/kernel.js'
import { attachKernel } from '../runtime/node-adapter.js'

export interface RunningServer {
  server: Server
  url: string
  /** Replaces the kernel for new requests; in-flight ones finish on the old one. */
  swap(kernel: Kernel): void
  /** Stops accepting connections and resolves when in-flight requests are done. */
  close(): Promise<void>
}

/** Starts listening; a port in use, a port that needs privileges or a host that is not this machine's is a user error. */
export async function startServer(
  kernel: Kernel,
  options: { port: number; host: string },
): Promise<RunningServer> {
  let current = kernel
  // Requests, and what Node's parser refuses or would answer itself: JSON errors too, in order.
  const server = attachKernel(createServer(), () => current)
  // Keep-alive a little longer than common proxies' idle timeouts; bound slow headers/bodies.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  server.requestTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, options)))
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

/**
 * A listen failure the user can mend (the port is taken or privileged, the host is not an address
 * of this machine or not a known name) as a user error naming the host and port; others unchanged.
 */
export function listenError(
  error: NodeJS.ErrnoException,
  options: { port: number; host: string },
): unknown {
  const { port, host } = options
  const at = `${host.includes(':') ? `[${host}]` : host}:${port}`
  const otherHost =
    'use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its addresses'
  switch (error.code) {
    case 'EADDRINUSE':
      return new FwError('FW_SERVE_PORT', `Port ${port} on ${host} is already in use`, {
        hint: 'Stop the other server or pass --port with a free port.',
        cause: error,
      })
    case 'EACCES':
      return new FwError('FW_SERVE_PORT', `Not allowed to listen on ${at} (EACCES)`, {
        hint:
          port < 1024
            ? `Ports below 1024 need root privileges (or CAP_NET_BIND_SERVICE): use a port of 1024 or more, e.g. --port 3000, behind a proxy if it must answer on ${port}.`
            : 'The system refused this port to fw (a security policy?): pass --port with another port, e.g. --port 3000.',
        cause: error,
      })
    case 'EADDRNOTAVAIL':
      return new FwError(
        'FW_SERVE_HOST',
        `Cannot listen on ${at}: ${host} is not an address of this machine (EADDRNOTAVAIL)`,
        {
          hint: `--host takes an address of this machine: ${otherHost}.`,
          cause: error,
        },
      )
    case 'EINVAL':
      return new FwError(
        'FW_SERVE_HOST',
        `Cannot listen on ${at}: the system refused ${host} as a local address (EINVAL)`,
        {
          hint: `A link-local IPv6 address needs its interface (e.g. fe80::1%eth0); otherwise ${otherHost}.`,
          cause: error,
        },
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new FwError(
        'FW_SERVE_HOST',
        `Cannot listen on ${at}: the host name ${host} ${error.code === 'ENOTFOUND' ? 'is not known' : 'cannot be looked up now'} (${error.code})`,
        {
          hint: `Check the spelling of --host, or ${otherHost}.`,
          cause: error,
        },
      )
    default:
      return error
  }
}
