/**
 * Sets `trace.trace_id` from a valid W3C `traceparent` header, else a fresh random trace id.
 */
import type { Middleware } from '../types.js'
import { idSource } from './random-ids.js'

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/

/** 32 random hex digits (a W3C trace id). */
export const newTraceId = idSource(32, (random) => random.toString('hex'))

/** The trace id of a request: its valid traceparent's, else a new one. */
export function traceIdOf(header: string): string {
  if (header === '') return newTraceId()
  const found = TRACEPARENT.exec(header.trim())
  const valid = found !== null && !/^0+$/.test(found[1]!) && !/^0+$/.test(found[2]!)
  return valid ? found[1]! : newTraceId()
}

export const trace: Middleware = (request, next) =>
  next(request.withAttribute('trace.trace_id', traceIdOf(request.getHeaderLine('traceparent'))))
