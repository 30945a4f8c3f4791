/**
 * A request written as raw bytes: names keep the case the client chose, a header can repeat, and
 * request lines no HTTP client sends (`OPTIONS *`, absolute-form targets) can be tried.
 */
import { connect } from 'node:net'

/** Sends `lines` (a request head) and resolves with everything the server sent back. */
export function rawExchange(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(`${lines.join('\r\n')}\r\n\r\n`))
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}
