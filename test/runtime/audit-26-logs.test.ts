/**
 * What an operator reads in the default logger's JSON lines (audit 26): a failed request's line
 * names its method, route and trace id; LOG_LEVEL is read as pino reads it, and a value pino
 * refuses is a user error rather than "a bug in fw"; a stdout nobody reads holds a bounded
 * buffer, the lines past it counted.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createLogger, logLevel } from '../../src/runtime/logger.js'
import { devLogger, serveLogger } from '../../src/serve/dev-logger.js'
import { serviceUnavailable } from '../../src/runtime/http-error.js'
import { bootKernel, cleanupTempDirs, lineSink, serve, type Register } from './kernel/support.js'
import { REPO_ROOT } from '../support/project.js'

afterAll(cleanupTempDirs)

const routes: Register = (r) => {
  r.get(
    '/orders/{id:int}',
    () => {
      throw new Error('boom')
    },
    'orders.show',
  )
  r.post('/pay', () => {
    throw serviceUnavailable('Payments down')
  })
}

const TRACE = '0af7651916cd43dd8448eb211c80319c'

describe('a failed request in the log', () => {
  it('names its method, route and the trace id of its traceparent', async () => {
    const sink = lineSink()
    const server = await serve(
      await bootKernel(routes, { log: createLogger('production', 'info', sink.stream) }),
    )
    try {
      const headers = {
        traceparent: `00-${TRACE}-b7ad6b7169203331-01`,
        'x-request-id': 'r-1',
        'x-forwarded-proto': 'https',
      }
      expect((await server.send('GET', '/orders/7', { headers })).status).toBe(500)
      expect((await server.send('POST', '/pay', { headers })).status).toBe(503)
    } finally {
      await server.close()
    }
    const [crash, outage] = sink.lines()
    expect(crash).toMatchObject({
      msg: 'Unhandled error',
      method: 'GET',
      path: '/orders/7',
      route: 'orders.show',
      request_id: 'r-1',
      trace_id: TRACE,
    })
    // An unnamed route: no route field.
    expect(outage).toMatchObject({ msg: 'Payments down', method: 'POST', trace_id: TRACE })
    expect(outage).not.toHaveProperty('route')
  })
})

describe('LOG_LEVEL', () => {
  it('is read in any case; empty is the default; anything else is a user error', () => {
    expect(logLevel(' Info ')).toBe('info')
    expect(logLevel('')).toBeUndefined()
    expect(logLevel(undefined)).toBeUndefined()
    expect(() => createLogger('production', 'verbose')).toThrow(
      expect.objectContaining({
        code: 'FW_SERVE_CONFIG',
        message: 'LOG_LEVEL "verbose" is not a log level',
      }),
    )
    expect(() => createLogger('production', '')).not.toThrow()
  })
})

describe('LOG_FORMAT', () => {
  it('is read in any case; empty is unset; anything else is a user error', () => {
    expect(serveLogger('development', false, ' Pretty ')).not.toBeNull()
    expect(serveLogger('development', true, 'JSON')).toBeNull()
    expect(serveLogger('development', false, '')).toBeNull()
    expect(() => serveLogger('production', false, 'text')).toThrow(
      expect.objectContaining({
        code: 'FW_SERVE_CONFIG',
        message: 'LOG_FORMAT "text" is not a log format',
      }),
    )
  })
})

describe('a stdout that is not read', () => {
  it('buffers 16 MiB of lines at most, and says how many it dropped', async () => {
    const logger = pathToFileURL(join(REPO_ROOT, 'dist/runtime/logger.js')).href
    // 40,000 lines of ~1 KB logged in one synchronous run: nothing can be written meanwhile.
    const script = `
      const { pino } = await import('pino')
      const { createLogger } = await import(${JSON.stringify(logger)})
      const log = createLogger('production', 'info')
      for (let i = 0; i < 40000; i++) log.info({ i, pad: 'x'.repeat(1000) }, 'line')
      process.stderr.write(String(log[pino.symbols.streamSym]._len))
    `
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise((done) => child.on('close', done))
    expect(code).toBe(0)
    expect(Number(stderr)).toBeLessThanOrEqual(16 * 1024 * 1024)
    const lines = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, any>)
    const last = lines.at(-1)!
    expect(last).toMatchObject({ level: 40 })
    expect(last.dropped).toBe(40000 - (lines.length - 1))
    expect(last.msg).toBe(`${last.dropped} log lines were dropped: the log output was not read`)
  })
})

describe("fw serve's readable logger", () => {
  const COLOURS = /\u001b\[\d+m/g
  const capture = (): { lines: string[]; log: ReturnType<typeof devLogger> } => {
    const lines: string[] = []
    return { lines, log: devLogger('debug', (line) => lines.push(line.replace(COLOURS, ''))) }
  }

  it("shows an error's causes and an AggregateError's errors below its stack, as the JSON line has them", () => {
    const { lines, log } = capture()
    const root = new Error('connect ECONNREFUSED password=hunter2')
    const error = new Error('Query failed', { cause: new TypeError('pool', { cause: root }) })
    log.error({ err: error }, 'Unhandled error')
    log.error({ err: new AggregateError([new Error('a1'), 'a2'], 'many') }, 'Unhandled error')
    const heads = (line: string) => line.split('\n').filter((l) => !/^\s+at /.test(l))
    expect(heads(lines[0]!).slice(1)).toEqual([
      '    Error: Query failed',
      '    caused by: TypeError: pool',
      '    caused by: Error: connect ECONNREFUSED password=[Redacted]',
    ])
    expect(heads(lines[1]!).slice(1)).toEqual([
      '    AggregateError: many',
      '    [0] Error: a1',
      '    [1] "a2"',
    ])
  })

  it('shows a thrown object holding a BigInt as JSON, not [object Object]', () => {
    const { lines, log } = capture()
    log.error({ err: { status: 502, id: 10n } }, 'Unhandled error')
    expect(lines[0]!.slice(9)).toBe('ERROR Unhandled error err={"status":502,"id":"10"}')
  })
})
