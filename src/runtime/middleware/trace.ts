/**
 * Sets `trace.trace_id` from a valid W3C `traceparent` header, else a fresh random trace id.
 */
import type { Middleware } from '../types.js'
import { idSource } from './random-ids.js'

// version-trace_id-parent_id-flags. A later version may append fields after a '-' (W3C Trace
// Context, "Versioning of traceparent"): its first four are read as version 00's.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/

/** 32 random hex digits (a W3C trace id). */
export const newTraceId = idSource(32, (random) => random.toString('hex'))

/** The trace id of a request: its valid traceparent's, else a new one. */
export function traceIdOf(header: string): string {
  if (header === '') return newTraceId()
  const found = TRACEPARENT.exec(header.trim())
  if (found === null) return newTraceId()
  const [, version, traceId, parentId, more] = found
  // Version ff is invalid; version 00 has exactly four fields; all-zero ids are invalid.
  const valid =
    version !== 'ff' &&
    (version !== '00' || more === undefined) &&
    !/^0+$/.test(traceId!) &&
    !/^0+$/.test(parentId!)
  return valid ? traceId! : newTraceId()
}

export const trace: Middleware = (request, next) =>
  next(request.withAttribute('trace.trace_id', traceIdOf(request.getHeaderLine('traceparent'))))
