/**
 * Sets `trace.trace_id` from a valid W3C `traceparent` header, else a fresh random trace id.
 */
import { randomFillSync } from 'node:crypto'
import type { Middleware } from '../types.js'

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/

// Random bytes come from a pool refilled 256 ids at a time: randomBytes(16) per request costs
// a system call (~10 µs, measured with bench/http/profile.mjs).
const POOL_IDS = 256
const pool = Buffer.alloc(16 * POOL_IDS)
let offset = pool.length

/** 32 random hex digits (a W3C trace id). */
export function newTraceId(): string {
  if (offset === pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  offset += 16
  return pool.toString('hex', offset - 16, offset)
}

/** The trace id of a request: its valid traceparent's, else a new one. */
export function traceIdOf(header: string): string {
  if (header === '') return newTraceId()
  const found = TRACEPARENT.exec(header.trim())
  const valid = found !== null && !/^0+$/.test(found[1]!) && !/^0+$/.test(found[2]!)
  return valid ? found[1]! : newTraceId()
}

export const trace: Middleware = (request, next) =>
  next(request.withAttribute('trace.trace_id', traceIdOf(request.getHeaderLine('traceparent'))))
