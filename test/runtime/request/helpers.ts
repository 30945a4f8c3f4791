/**
 * Real-HTTP helpers for the request tests: a node:http server that builds an FwRequest, loads the
 * body and answers JSON of what it parsed; a client that sends raw bodies; temp upload dirs.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { HttpError } from '../../../src/runtime/http-error.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'
import type { RequestOptions } from '../../../src/runtime/types.js'

export type Handler = (request: FwRequest) => unknown | Promise<unknown>

export interface TestServer {
  port: number
  close(): Promise<void>
}

/** What the default handler reports about a request. */
export async function describeRequest(request: FwRequest): Promise<Record<string, unknown>> {
  const files: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(request.files())) {
    const list = Array.isArray(value) ? value : [value]
    files[field] = await Promise.all(list.map(describeFile))
  }
  return {
    method: request.getMethod(),
    input: request.input(),
    query: request.query(),
    post: request.post(),
    json: request.json(),
    content: request.getContent(),
    files,
  }
}

async function describeFile(file: UploadedFile): Promise<Record<string, unknown>> {
  const path = file.getPath()!
  return {
    name: file.getClientFilename(),
    type: file.getClientMediaType(),
    size: file.getSize(),
    error: file.getError(),
    existsDuringRequest: existsSync(path),
    content: (await readFile(path)).toString('latin1'),
  }
}

/** A server answering `handler(request)` as JSON; HttpErrors become `{ error }` with their status. */
export async function startServer(
  options: RequestOptions = {},
  handler: Handler = describeRequest,
): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    const request = FwRequest.fromNode(req, options)
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      res.once('finish', () => void request.cleanup())
    }
    request
      .loadBody()
      .then(() => handler(request))
      .then((body) => answer(200, body))
      .catch((error: unknown) => {
        if (error instanceof HttpError) answer(error.status, { error: error.message })
        else answer(500, { error: String(error) })
      })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

export interface Sent {
  status: number
  body: Record<string, any>
}

/** Sends one request; the body is written as given (Content-Length from its size unless set). */
export function send(
  port: number,
  options: {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
  },
): Promise<Sent> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body)
  const headers: Record<string, string> = { ...options.headers }
  if (body && headers['transfer-encoding'] === undefined)
    headers['content-length'] ??= String(body.length)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : JSON.parse(text) })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; type?: string; content: string | Buffer }

export const BOUNDARY = '----fwTestBoundary7MA4YWxk'

/** A multipart/form-data body with its closing boundary. */
export function multipart(parts: Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = []
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`
    if ('filename' in part) {
      head += `; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}`
    }
    chunks.push(Buffer.from(`${head}\r\n\r\n`))
    chunks.push(Buffer.from('filename' in part ? part.content : part.value))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`

/** A fresh, empty upload directory; removed by the returned function. */
export async function uploadDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'fw-request-test-'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

export function listDir(dir: string): Promise<string[]> {
  return readdir(dir)
}

/** Polls `check` until it holds or `ms` pass; returns its last result. */
export async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

/**
 * Servers and upload dirs for one test file, closed and removed after each test.
 * @example
 * const { serve, freshDir } = useServers()
 */
export function useServers(): {
  serve: (options?: RequestOptions, handler?: Handler) => Promise<TestServer>
  freshDir: () => Promise<string>
} {
  const servers: TestServer[] = []
  const removals: Array<() => Promise<void>> = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
    await Promise.all(removals.splice(0).map((remove) => remove()))
  })
  return {
    serve: async (options = {}, handler) => {
      const server = await startServer(options, handler)
      servers.push(server)
      return server
    },
    freshDir: async () => {
      const { dir, remove } = await uploadDir()
      removals.push(remove)
      return dir
    },
  }
}
