/**
 * Helpers of the wire tests: a kernel served through `attachKernel`, bytes written in one TCP
 * write (no half-close: Node would abort the requests in flight), and the answers split apart.
 */
import { createServer, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { attachKernel } from '../../../src/runtime/node-adapter.js'
import type { KernelOptions } from '../../../src/runtime/kernel.js'
import { bootKernel, type Register } from './support.js'

export interface WireServer {
  server: Server
  port: number
  close(): Promise<void>
}

/** Boots a kernel for `register` and serves it with `attachKernel` on 127.0.0.1. */
export async function serveWire(
  register: Register,
  options: Partial<KernelOptions> = {},
  configure: (server: Server) => void = () => {},
): Promise<WireServer> {
  const kernel = await bootKernel(register, options)
  const server = attachKernel(createServer(), () => kernel)
  configure(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export interface Exchange {
  /** Everything the server sent, as latin1 text. */
  text: string
  /** Whether the server closed the connection (else the wait ran out). */
  closed: boolean
}

/**
 * Writes `chunks` (one TCP write each, `gapMs` apart) and collects the answer until the server
 * closes the connection or `waitMs` passes.
 */
export function exchange(
  port: number,
  chunks: (string | Buffer)[] | string | Buffer,
  options: { waitMs?: number; gapMs?: number } = {},
): Promise<Exchange> {
  const list = Array.isArray(chunks) ? chunks : [chunks]
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    const done = (closed: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, closed })
    }
    const timer = setTimeout(() => done(false), options.waitMs ?? 2000)
    socket.on('connect', async () => {
      for (const [i, chunk] of list.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, options.gapMs ?? 20))
        if (!socket.destroyed)
          socket.write(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)
      }
    })
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    socket.on('close', () => done(true))
    socket.on('error', reject)
  })
}

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Splits the bytes of several answers (each with Content-Length) apart; fails on anything else. */
export function splitAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = []
  let rest = text
  while (rest !== '') {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) throw new Error(`Not an HTTP answer: ${JSON.stringify(rest.slice(0, 200))}`)
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    answers.push({
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    })
    rest = rest.slice(end + 4 + length)
  }
  return answers
}

/** A request head (lines joined by CRLF, ending with the blank line) and an optional body. */
export function head(lines: string[], body = ''): string {
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}
