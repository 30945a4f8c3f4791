/** Helpers of the kernel tests: a cache built for a routes function, a booted kernel, requests. */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { buildRouter } from '../../../src/compiler/build.js'
import { writeCache } from '../../../src/compiler/write-cache.js'
import { collectRoutes, type Registrar } from '../../../src/define/registrar.js'
import { Kernel, type KernelOptions } from '../../../src/runtime/kernel.js'
import { silentLogger } from '../../../src/runtime/logger.js'
import { createListener } from '../../../src/runtime/node-adapter.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import type { CreateRequestInit } from '../../../src/runtime/request/factory.js'
import { json, type FwResponse } from '../../../src/runtime/response.js'
import { unauthorized } from '../../../src/runtime/http-error.js'
import type { Logger } from '../../../src/runtime/types.js'
import { tempDir } from '../../support/compile.js'

export { cleanupTempDirs } from '../../support/compile.js'

export type Register = (r: Registrar) => void

/** Compiles `register` into a fresh cache directory and returns it. */
export async function buildCacheFor(register: Register): Promise<string> {
  const registrar = collectRoutes(register)
  const output = buildRouter(registrar.routes, { aliases: new Set(registrar.aliases.keys()) })
  const dir = join(tempDir('fw-kernel-'), 'cache')
  await writeCache(dir, output)
  return dir
}

/** Builds a cache for `register` and boots a kernel on it (silent log, test env, a fixed key). */
export async function bootKernel(
  register: Register,
  options: Partial<KernelOptions> = {},
): Promise<Kernel> {
  const dir = await buildCacheFor(register)
  return Kernel.boot({
    routeCache: dir,
    register,
    log: silentLogger,
    env: 'test',
    signingKeys: ['kernel-test-key'],
    ...options,
  })
}

/**
 * Two body-reading routes for the wire tests: `POST /echo` reads its JSON body and answers it;
 * `POST /private` has a guard that refuses (401) before the body is read.
 */
export const bodyRoutes: Register = (r) => {
  r.post('/echo', (req: FwRequest) => json({ got: req.input() }), 'echo')
  const guard = (): never => {
    throw unauthorized()
  }
  r.post('/private', (req: FwRequest) => json({ got: req.input() }), {
    name: 'private',
    middleware: [guard],
  })
}

export interface LogLine {
  level: string
  obj: object | string
  msg: string | undefined
}

/** A logger that keeps every call. */
export function captureLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  const at = (level: string) => (obj: object | string, msg?: string) =>
    void lines.push({ level, obj, msg })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** Handles one in-process request. */
export function call(kernel: Kernel, init: CreateRequestInit | string = {}): Promise<FwResponse> {
  return kernel.handle(FwRequest.create(typeof init === 'string' ? { uri: init } : init))
}

/** The body of an in-memory response as text. */
export async function textOf(response: FwResponse): Promise<string> {
  const body = response.body
  if (body === null) return ''
  if (typeof body === 'string') return body
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8')
  const chunks: Buffer[] = []
  for await (const chunk of body as Readable) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}

export async function jsonOf(response: FwResponse): Promise<any> {
  return JSON.parse(await textOf(response))
}

export interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

export interface Served {
  port: number
  send(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: string | Buffer },
  ): Promise<Reply>
  close(): Promise<void>
}

/** Serves `kernel` over real HTTP on 127.0.0.1, port 0. */
export async function serve(kernel: Kernel): Promise<Served> {
  const server: Server = createServer(createListener(() => kernel))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const send: Served['send'] = (method, path, options = {}) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method, path, headers: options.headers, agent: false },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              headers: res.headers,
              text: Buffer.concat(chunks).toString(),
            }),
          )
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(options.body)
    })
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { port, send, close }
}

/** A stream keeping the lines written to it, each parsed (a line that is no JSON fails). */
export function lineSink(): { stream: Writable; lines: () => Array<Record<string, any>> } {
  let text = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  })
  const lines = () =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, any>)
  return { stream, lines }
}
