/** Helpers of the auth tests: running middleware like the kernel does, and the real services. */
import { randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { createConnection, type AddressInfo } from 'node:net'
import pg from 'pg'
import { createAuth, createUser, type Auth, type AuthOptions } from '../../src/auth/auth.js'
import { authRoutes } from '../../src/auth/routes.js'
import type { Registrar } from '../../src/define/registrar.js'
import { Kernel } from '../../src/runtime/kernel.js'
import { createListener } from '../../src/runtime/node-adapter.js'
import { renderError, toHttpError } from '../../src/runtime/error-boundary.js'
import { silentLogger } from '../../src/runtime/logger.js'
import { compose } from '../../src/runtime/pipeline.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import { json, type FwResponse } from '../../src/runtime/response.js'
import type { KernelServices, Middleware, MiddlewareFactory } from '../../src/runtime/types.js'
import { compileRoutes } from '../support/compile.js'

export const SECRET = 'test-secret-that-is-at-least-32-bytes-long!!'

export const kernelStub: KernelServices = {
  log: silentLogger,
  env: 'test',
  urlFor: () => '/',
  resolve: () => undefined,
}

export interface Answer {
  status: number
  headers: Record<string, string>
  body: Record<string, unknown>
}

/** The attributes the handler saw, answered as JSON. */
const echoAuth = (request: FwRequest): FwResponse =>
  json({
    user_id: request.getAttribute('auth.user_id'),
    roles: request.getAttribute('auth.roles'),
    payload: request.getAttribute('auth.payload'),
  })

/** Runs middleware around a handler with the kernel's composition and error boundary. */
export async function run(
  layers: Middleware[],
  request: FwRequest,
  handler: (request: FwRequest) => FwResponse | Promise<FwResponse> = echoAuth,
): Promise<Answer> {
  const rescue = async (error: unknown, req: FwRequest): Promise<FwResponse> => {
    const context = {
      accept: req.getHeaderLine('accept'),
      path: req.getPath(),
      requestId: undefined,
      debug: false,
      log: silentLogger,
    }
    return renderError(toHttpError(error, context), context)
  }
  const response = await compose(layers, handler, rescue)(request)
  const headers: Record<string, string> = {}
  for (const name of Object.keys(response.headers)) headers[name] = response.header(name)!
  const text = typeof response.body === 'string' ? response.body : ''
  return {
    status: response.status,
    headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  }
}

export function build(factory: MiddlewareFactory, params: string[] = []): Middleware {
  return factory(params, kernelStub)
}

/** A GET request with the given Authorization header values (none when empty). */
export function withAuthorization(...values: string[]): FwRequest {
  return FwRequest.create({
    uri: '/auth/me',
    headers: values.length === 0 ? {} : { authorization: values },
  })
}

export function post(
  uri: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): FwRequest {
  return FwRequest.create({
    method: 'POST',
    uri,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

/** A table prefix no other test file uses. */
export function uniquePrefix(name: string): string {
  return `t_${name}_${process.pid}_${randomBytes(3).toString('hex')}_`
}

/**
 * Table prefixes for a test file's PostgreSQL stores: `next()` makes one, `drop()` (in afterAll)
 * drops the tables fw made under each.
 */
export function pgTables(name: string): { next(): string; drop(): Promise<void> } {
  const made: string[] = []
  return {
    next() {
      made.push(uniquePrefix(name))
      return made.at(-1)!
    },
    async drop() {
      if (made.length === 0) return
      const client = new pg.Client({ connectionString: POSTGRES_URL })
      await client.connect()
      try {
        for (const p of made)
          await client.query(
            `DROP TABLE IF EXISTS ${p}refresh_tokens, ${p}revoked_tokens, ${p}users`,
          )
      } finally {
        await client.end()
      }
    },
  }
}

// In CI the real services must be there: tests using them run (and fail) instead of skipping.
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1'
export const POSTGRES_URL = process.env.DATABASE_URL?.startsWith('postgres')
  ? process.env.DATABASE_URL
  : 'postgres://postgres@127.0.0.1:5432/test'
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Whether the service at `url` accepts TCP connections (always true in CI: fail, don't skip). */
export async function reachable(url: string): Promise<boolean> {
  if (IN_CI) return true
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) }, () => {
      socket.end()
      resolve(true)
    })
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('error', () => resolve(false))
  })
}

/** Base64url of a JSON value (for hand-made tokens). */
export function b64(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  )
}

/** An app serving the recipe's routes over real HTTP on 127.0.0.1 (a port of its own). */
export interface AuthApp {
  base: string
  close: () => Promise<void>
}

/** The throttle issue owns 'throttle'; here it lets everything through. */
const passThrough = () => (request: never, next: (r: never) => unknown) => next(request)

/** Boots a Kernel on a compiled cache of `authRoutes(r, auth)` and serves it with node:http. */
export async function serveAuthApp(auth: Auth): Promise<AuthApp> {
  const register = (r: Registrar): void => authRoutes(r, auth)
  const { dir } = await compileRoutes(register)
  const kernel = await Kernel.boot({
    routeCache: dir,
    register,
    env: 'test',
    log: silentLogger,
    middleware: { ...auth.middleware, throttle: passThrough as never },
  })
  const server: Server = createServer(createListener(() => kernel))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** An answer as the auth tests read it: the body as text and parsed (`{}` when not JSON). */
export interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  body: Record<string, unknown>
}

/** Sends a request to `app` with the body and Content-Type as given (none when absent). */
export function send(
  app: AuthApp,
  method: string,
  path: string,
  options: { json?: unknown; body?: string; type?: string; token?: string } = {},
): Promise<Reply> {
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.body
  const headers: Record<string, string> = {}
  const type = options.type ?? (options.json !== undefined ? 'application/json' : undefined)
  if (type !== undefined) headers['content-type'] = type
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${app.base}${path}`, { method, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        let parsed: Record<string, unknown> = {}
        try {
          parsed = JSON.parse(text) as Record<string, unknown>
        } catch {
          // not JSON: the assertions on `body` fail and show `text`
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Logs `email` in at POST /auth/login (a 200 expected) and resolves its token. */
export async function loginToken(app: AuthApp, email: string, password: string): Promise<string> {
  const reply = await send(app, 'POST', '/auth/login', { json: { email, password } })
  if (reply.status !== 200) throw new Error(`login of ${email}: ${reply.status} ${reply.text}`)
  return reply.body.token as string
}

/**
 * Runs `test` against an auth app (SQLite in memory) holding two users, mallory@example.com and
 * ada@example.com, both with `password`; stopped afterwards.
 */
export async function withTwoUsers(
  options: AuthOptions,
  password: string,
  test: (app: AuthApp) => Promise<void>,
): Promise<void> {
  const server = await startAuthRun({ database: 'sqlite::memory:', ...options })
  try {
    for (const [email, name] of [
      ['mallory@example.com', 'Mallory'],
      ['ada@example.com', 'Ada'],
    ] as const)
      await createUser(server.auth, { email, name, password })
    await test(server.app)
  } finally {
    await server.stop()
  }
}

/** One run of a server: an Auth and its app, closed like a process that stops. */
export interface AuthRun {
  auth: Auth
  app: AuthApp
  stop: () => Promise<void>
}

/** Starts an Auth (the test secret, development rules unless `options` say) and its app. */
export async function startAuthRun(options: AuthOptions): Promise<AuthRun> {
  const auth = createAuth({ secret: SECRET, production: false, ...options })
  const app = await serveAuthApp(auth)
  return {
    auth,
    app,
    stop: async () => {
      await app.close()
      await auth.close()
    },
  }
}
