/** Starts the real `fw serve` on a free port for end-to-end tests, and stops it. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { stripVTControlCharacters } from 'node:util'
import { FW_BIN, REPO_ROOT } from './project.js'

export interface ServedApp {
  url: string
  port: number
  /** The fw serve process (the cluster primary with --workers). */
  pid: number
  output: () => string
  stop: () => Promise<number | null>
}

/** Spawns `fw serve --port 0` with the given flags and resolves once the banner names the URL. */
export function serveApp(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<ServedApp> {
  const child: ChildProcess = spawn(process.execPath, [FW_BIN, 'serve', '--port', '0', ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', LOG_LEVEL: 'silent', ...options.env },
  })
  let text = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fw serve did not start:\n${text}`)), 30_000)
    const onData = (chunk: Buffer): void => {
      text += stripVTControlCharacters(chunk.toString())
      const found = /fw serve → (http:\/\/[^\s]+)/.exec(text)
      if (found) {
        clearTimeout(timer)
        const url = found[1]!
        resolve({
          url,
          port: Number(new URL(url).port),
          pid: child.pid!,
          output: () => text,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode)
              child.once('exit', (code) => done(code))
              child.kill('SIGTERM')
            }),
        })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`fw serve exited with ${code}:\n${text}`))
    })
  })
}

/** An answer as a test reads it: status, headers, the body as text and parsed as JSON. */
export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: () => any
}

/** One request to 127.0.0.1:`port` over node:http, the whole answer read. */
export function sendTo(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            text,
            json: () => JSON.parse(text),
          })
        })
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

/**
 * `send` and `get` bound to the app `current()` returns when called (the app a beforeAll starts).
 * @example
 * const { send, get } = clientOf(() => app)
 */
export function clientOf(current: () => { port: number }): {
  send: (
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: string | Buffer },
  ) => Promise<Answer>
  get: (path: string, headers?: Record<string, string>) => Promise<Answer>
  /** POSTs `data` as JSON from a client address of its own (see `freshClient`). */
  postJson: (path: string, data: unknown, headers?: Record<string, string>) => Promise<Answer>
} {
  const send = (
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: string | Buffer } = {},
  ): Promise<Answer> => sendTo(current().port, method, path, options)
  const postJson = (path: string, data: unknown, headers: Record<string, string> = {}) =>
    send('POST', path, {
      headers: { 'content-type': 'application/json', ...freshClient(), ...headers },
      body: JSON.stringify(data),
    })
  return { send, get: (path, headers = {}) => send('GET', path, { headers }), postJson }
}

/**
 * A client address of its own (X-Forwarded-For from loopback is trusted), fresh per call: the
 * login routes' throttle counts each test's requests apart.
 */
export function freshClient(): Record<string, string> {
  const octet = (): number => 1 + (randomBytes(1)[0]! % 250)
  return { 'x-forwarded-for': `10.${octet()}.${octet()}.${octet()}` }
}

export const bearer = (token: string): Record<string, string> => ({
  authorization: `Bearer ${token}`,
})

/** The claims of a JWT, unverified. */
export const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>

/** The port a scaffolded `server.mjs` child says it listens on ("listening on http://host:port"). */
export function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 20_000)
    const onData = (chunk: Buffer): void => {
      text += chunk.toString()
      const found = /listening on http:\/\/\S+:(\d+)/.exec(text)
      if (found) {
        clearTimeout(timer)
        resolve(Number(found[1]))
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
  })
}

/**
 * The worker processes of `fw serve --workers`: children of `pid` whose command line starts with
 * node's path (Node 24 names its main thread, so `pgrep -x node` no longer finds them; esbuild's
 * service is a child too).
 */
export function workerPids(pid: number): number[] {
  return execFileSync('pgrep', ['-f', '-P', String(pid), `^${process.execPath} `], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .map(Number)
}
