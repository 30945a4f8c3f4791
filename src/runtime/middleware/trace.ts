/**
 * Sets `trace.trace_id` from a valid W3C `traceparent` header, else a fresh random trace id.
 */
import { randomBytes } from 'node:crypto'
import type { Middleware } from '../types.js'

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/

export const trace: Middleware = (request, next) => {
  const found = TRACEPARENT.exec(request.getHeaderLine('traceparent').trim())
  const valid = found !== null && !/^0+$/.test(found[1]!) && !/^0+$/.test(found[2]!)
  const traceId = valid ? found[1]! : randomBytes(16).toString('hex')
  return next(request.withAttribute('trace.trace_id', traceId))
}
