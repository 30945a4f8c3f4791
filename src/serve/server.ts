/**
 * The HTTP server host used by `fw serve`: sensible timeouts, a graceful drain on SIGTERM/SIGINT,
 * and a kernel reference that `--watch` can swap between requests.
 */
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http'
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

/**
 * Idle keep-alive connections live a little longer than the 60 s idle timeout of common proxies
 * and load balancers (AWS ALB, nginx's upstream keepalive_timeout), so the proxy, not fw, closes
 * them and never sends a request down a connection fw is closing.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000
/**
 * A client has 20 s to send a request's headers (slowloris), 60 s for the whole request, uploads
 * included. Since Node 18 the headers clock starts at the request's first byte, not when the
 * connection turned idle, so it need not exceed the keep-alive timeout; Node refuses a headers
 * timeout over the request timeout (ERR_OUT_OF_RANGE).
 */
export const HEADERS_TIMEOUT_MS = 20_000
export const REQUEST_TIMEOUT_MS = 60_000
/** How often Node looks for requests over those timeouts (its default, 30 s, would double them). */
const TIMEOUT_CHECK_MS = 2_000
/**
 * How long after a stop the idle keep-alive connections stay open: a request already on its way
 * down one (a round trip, under a second) is answered, with `Connection: close`, instead of reset.
 */
const IDLE_GRACE_MS = 1_000

/** Starts listening; a port in use, a port that needs privileges or a host that is not this machine's is a user error. */
export async function startServer(
  kernel: Kernel,
  options: { port: number; host: string },
): Promise<RunningServer> {
  let current = kernel
  let closing = false
  // Once draining, every response not begun yet says `Connection: close`: a keep-alive client
  // would otherwise send its next request down a connection closed under it (ECONNRESET).
  // writeHead is where Node decides (streamed bodies reach it too, through _implicitHeader); a
  // flag read there costs a request nothing, where a listener or a Set of responses would.
  class Response<R extends IncomingMessage> extends ServerResponse<R> {
    override writeHead(...args: unknown[]): this {
      if (closing) this.shouldKeepAlive = false
      return (super.writeHead as (...a: unknown[]) => this).apply(this, args)
    }
  }
  // Requests, and what Node's parser refuses or would answer itself: JSON errors too, in order.
  const server = attachKernel(
    createServer({
      ServerResponse: Response,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    }),
    () => current,
  )
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
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
        closing = true
        // Idle keep-alive connections are closed after IDLE_GRACE_MS, and then each one as it turns
        // idle (its last response ended). Closed at once, as http's close() does, a client whose
        // next request was already on its way got ECONNRESET instead of an answer (every
        // connection of a client under load, measured: 16 of 16); within the grace it is answered,
        // saying `Connection: close`.
        let sweep: NodeJS.Timeout | undefined
        const grace = setTimeout(() => {
          server.closeIdleConnections()
          sweep = setInterval(() => server.closeIdleConnections(), 50)
        }, IDLE_GRACE_MS)
        // http's close() calls closeIdleConnections() first: silenced for that call only.
        server.closeIdleConnections = () => {}
        try {
          server.close(() => {
            clearTimeout(grace)
            clearInterval(sweep)
            resolve()
          })
        } finally {
          Reflect.deleteProperty(server, 'closeIdleConnections')
        }
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
