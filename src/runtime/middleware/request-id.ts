/**
 * Sets `request_id` from a well-formed incoming X-Request-Id (a proxy's id keeps logs joined up),
 * else a new UUID, and echoes it in the response.
 */
import type { FwRequest } from '../request/request.js'
import type { Middleware } from '../types.js'
import { formatUuids, idSource } from './random-ids.js'

/** Ids travel into logs and headers: only short, printable, unambiguous ones are accepted. */
export const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** `value` when it is a well-formed request id, else undefined. */
export function safeRequestId(value: unknown): string | undefined {
  // Most requests send none (''): answered before the regex, whose call costs ~150 instructions.
  return typeof value === 'string' && value !== '' && SAFE_ID.test(value) ? value : undefined
}

/** The request id of `request`: a well-formed incoming X-Request-Id, else a new UUID. */
export function requestIdFor(request: FwRequest): string {
  return safeRequestId(request.getHeaderLine('x-request-id')) ?? newRequestId()
}

/** A random (version 4) UUID. */
export const newRequestId = idSource(36, formatUuids)

export const requestId: Middleware = async (request, next) => {
  const id = requestIdFor(request)
  const response = await next(request.withAttribute('request_id', id))
  return response.withHeader('x-request-id', id)
}
