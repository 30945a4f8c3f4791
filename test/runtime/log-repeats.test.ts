/**
 * An outage fails every request with the same 503: logged in full once, then once a minute with
 * how many were left out. A line with a stack per request filled the log (33 MB in 10 s under
 * load with the database down).
 */
import { describe, expect, it } from 'vitest'
import { toHttpError, type ErrorContext } from '../../src/runtime/error-boundary.js'
import { HttpError, serviceUnavailable } from '../../src/runtime/http-error.js'
import { repeatsOf, REPEAT_MS } from '../../src/runtime/log-repeats.js'
import type { Logger } from '../../src/runtime/types.js'

function recorder(): Logger & { lines: { fields: Record<string, unknown>; message: string }[] } {
  const lines: { fields: Record<string, unknown>; message: string }[] = []
  const record = (fields: unknown, message?: string): void =>
    void lines.push({ fields: fields as Record<string, unknown>, message: String(message) })
  return { lines, debug: () => {}, info: () => {}, warn: record, error: record }
}

const context = (log: Logger, requestId: string): ErrorContext => ({
  accept: 'application/json',
  path: '/auth/me',
  requestId,
  debug: false,
  log,
})

describe('repeated server errors', () => {
  it('logs the first of an outage in full and leaves out the same ones after it', () => {
    const log = recorder()
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5432')
    for (let i = 0; i < 50; i++) {
      const error = serviceUnavailable('The user store is unavailable', { cause: refused })
      expect(toHttpError(error, context(log, `r${i}`)).status).toBe(503)
    }
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]!.message).toBe('The user store is unavailable')
    expect(log.lines[0]!.fields.request_id).toBe('r0')
    expect((log.lines[0]!.fields.err as Error).cause).toBe(refused)
  })

  it('logs other kinds, and each logger, on their own', () => {
    const log = recorder()
    const other = recorder()
    toHttpError(serviceUnavailable('The user store is unavailable'), context(log, 'a'))
    toHttpError(serviceUnavailable('The revocation list is unavailable'), context(log, 'b'))
    toHttpError(new HttpError(502, { message: 'The upstream failed' }), context(log, 'c'))
    toHttpError(serviceUnavailable('The user store is unavailable'), context(other, 'd'))
    expect(log.lines.map((line) => line.message)).toEqual([
      'The user store is unavailable',
      'The revocation list is unavailable',
      'The upstream failed',
    ])
    expect(other.lines).toHaveLength(1)
  })

  it('says how many were left out when the next one is logged, a minute on', () => {
    const log = recorder()
    const start = 1_000_000
    expect(repeatsOf(log, 'kind', start)).toBe(0)
    expect(repeatsOf(log, 'kind', start + 1)).toBeNull()
    expect(repeatsOf(log, 'kind', start + REPEAT_MS - 1)).toBeNull()
    expect(repeatsOf(log, 'kind', start + REPEAT_MS)).toBe(2)
    expect(repeatsOf(log, 'kind', start + REPEAT_MS + 1)).toBeNull()
    expect(repeatsOf(log, 'kind', start + 2 * REPEAT_MS + 5)).toBe(1)
  })
})
