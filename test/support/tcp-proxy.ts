/**
 * A TCP proxy in front of a real service (Redis, PostgreSQL), for outage tests: it can go silent,
 * cut every connection, stop listening and listen again on the same port.
 */
import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net'

export interface TcpProxy {
  /** The service's URL with the proxy's host and port. */
  url: string
  port: number
  /** Stop forwarding on the open connections (the service went silent). */
  silence(): void
  /** How many bytes clients sent that silence kept from the service (a request is waiting). */
  held(): number
  /** Reset every open connection (the service restarted, a failover); forwarding resumes. */
  cut(): void
  /** Stop listening and reset every connection (the service is down). */
  down(): Promise<void>
  /** Listen again on the same port (the service is back). */
  up(): Promise<void>
  close(): Promise<void>
}

/**
 * @example
 * const proxy = await startTcpProxy(REDIS_URL)
 * const redis = new Redis(proxy.url)
 */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port: targetPort } = new URL(target)
  const sockets = new Set<Socket>()
  let silent = false
  let held = 0
  let server: Server | null = null
  let port = 0
  const cut = (): void => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  const up = async (): Promise<void> => {
    const listening = createServer((client) => {
      const upstream = createConnection({ host: hostname, port: Number(targetPort) })
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        sockets.add(from)
        from.on('error', () => {})
        from.on('close', () => to.destroy())
        from.on('data', (chunk: Buffer) => {
          if (!silent) to.write(chunk)
          else if (from === client) held += chunk.length
        })
      }
    })
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve))
    port = (listening.address() as AddressInfo).port
    server = listening
  }
  const down = async (): Promise<void> => {
    const closing = server
    server = null
    const closed = new Promise((resolve) => (closing ? closing.close(resolve) : resolve(null)))
    cut()
    await closed
  }
  await up()
  const url = new URL(target)
  url.host = `127.0.0.1:${port}`
  return {
    url: url.toString(),
    port,
    silence: () => void (silent = true),
    held: () => held,
    cut: () => {
      cut()
      silent = false
    },
    down,
    up,
    close: down,
  }
}
