/**
 * An outage fails every request with the same 503: logged in full once, then once a minute with
 * how many were left out. A line with a stack per request filled the log (33 MB in 10 s under
 * load with the database down).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { toHttpError, type ErrorContext } from '../../src/runtime/error-boundary.js'
import { HttpError, serviceUnavailable } from '../../src/runtime/http-error.js'
import { REPEAT_MS } from '../../src/runtime/log-repeats.js'
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

afterEach(() => {
  vi.useRealTimers()
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
    expect((log.lines[0]!.fields.err as Error).stack).toContain('HttpError')
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

  it('says how many were left out when the minute ends, and logs the next one in full', () => {
    vi.useFakeTimers()
    const log = recorder()
    const unavailable = (id: string) =>
      toHttpError(serviceUnavailable('The user store is unavailable'), context(log, id))
    unavailable('a')
    vi.advanceTimersByTime(1_000)
    unavailable('b')
    unavailable('c')
    expect(log.lines).toHaveLength(1)
    vi.advanceTimersByTime(REPEAT_MS - 1_000)
    expect(log.lines).toHaveLength(2)
    expect(log.lines[1]!.fields).toEqual({ repeated: 2, first_request_id: 'a' })
    expect(log.lines[1]!.message).toBe(
      'The user store is unavailable (2 more like it in the 60 s after, not logged)',
    )
    unavailable('d')
    expect(log.lines).toHaveLength(3)
    expect(log.lines[2]!.fields.request_id).toBe('d')
    vi.advanceTimersByTime(REPEAT_MS)
    expect(log.lines).toHaveLength(3)
  })

  it('keys a kind by status and message, not by the cause (which may carry input)', () => {
    const log = recorder()
    for (let i = 0; i < 300; i++) {
      const cause = new Error(`invalid input syntax for type uuid: "${i}"`)
      toHttpError(serviceUnavailable('The user store is unavailable', { cause }), context(log, 'x'))
    }
    expect(log.lines).toHaveLength(1)
  })
})
