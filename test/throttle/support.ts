/** Helpers of the throttle tests: a kernel booted from a routes source, requests, a log, Redis. */
import { join } from 'node:path'
import { buildCache } from '../../src/compiler/index.js'
import { Kernel, type KernelOptions } from '../../src/runtime/kernel.js'
import { FwRequest } from '../../src/runtime/request/request.js'
import type { FwResponse } from '../../src/runtime/response.js'
import type { Logger, MiddlewareFactory } from '../../src/runtime/types.js'
import { createThrottle, type ThrottleOptions } from '../../src/throttle/index.js'
import { makeProject } from '../support/project.js'

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A logger that keeps what was logged. */
export function captureLogger(): Logger & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = []
  const at = (level: string) => (obj: object | string, msg?: string) =>
    void lines.push({ level, msg: typeof obj === 'string' ? obj : (msg ?? '') })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** A stand-in for the auth middleware: `X-User: 7` sets auth.user_id = 7. */
const fakeAuth: MiddlewareFactory = () => (request, next) => {
  const user = request.getHeaderLine('x-user')
  return next(user === '' ? request : request.withAttribute('auth.user_id', Number(user)))
}

/** Builds `routes` (a routes file's source) into a temp cache and boots a kernel on it. */
export async function bootApp(
  routes: string,
  throttle: ThrottleOptions = {},
  kernel: Partial<KernelOptions> = {},
): Promise<{ kernel: Kernel; log: ReturnType<typeof captureLogger> }> {
  const dir = makeProject({ 'routes.ts': routes })
  return bootRoutesFile(join(dir, 'routes.ts'), join(dir, 'cache'), throttle, kernel)
}

export async function bootRoutesFile(
  routesFile: string,
  cacheDir: string,
  throttle: ThrottleOptions = {},
  kernel: Partial<KernelOptions> = {},
): Promise<{ kernel: Kernel; log: ReturnType<typeof captureLogger> }> {
  const built = await buildCache({ routesFile, cacheDir })
  const log = captureLogger()
  const booted = await Kernel.boot({
    routeCache: cacheDir,
    register: built.register,
    log,
    env: 'test',
    signingKeys: ['test-key'],
    middleware: { throttle: createThrottle(throttle), auth: fakeAuth },
    ...kernel,
  })
  return { kernel: booted, log }
}

export interface Call {
  ip?: string
  headers?: Record<string, string>
  method?: string
}

/** Handles one request from `ip` (the socket peer) through the kernel. */
export function call(kernel: Kernel, uri: string, options: Call = {}): Promise<FwResponse> {
  const request = FwRequest.create({
    method: options.method ?? 'GET',
    uri,
    headers: options.headers ?? {},
    server: { REMOTE_ADDR: options.ip ?? '203.0.113.9' },
  })
  return kernel.handle(request)
}

/** `count` requests at once; their statuses. */
export async function burst(
  kernel: Kernel,
  uri: string,
  count: number,
  options: Call = {},
): Promise<number[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, () => call(kernel, uri, options)),
  )
  return responses.map((r) => r.status)
}

export function countOf(statuses: readonly number[], status: number): number {
  return statuses.filter((s) => s === status).length
}

/** Whether Redis answers PING at `url` within a second. */
export async function redisReachable(url = REDIS_URL): Promise<boolean> {
  const { Redis } = await import('ioredis')
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    return (await client.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/**
 * Redis tests run wherever Redis answers; in CI (`CI=true`) they always run, so a missing Redis
 * fails them instead of skipping them silently.
 */
export const IN_CI = !['', '0', 'false'].includes(process.env.CI ?? '')
export const RUN_REDIS_TESTS = IN_CI || (await redisReachable())

/** Deletes every key under `prefix`. */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis')
  const client = new Redis(url)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      if (keys.length > 0) await client.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
}

/** A port nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}
