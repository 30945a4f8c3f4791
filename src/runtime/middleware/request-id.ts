/**
 * Sets `request_id` from a well-formed incoming X-Request-Id (a proxy's id keeps logs joined up),
 * else a new UUID, and echoes it in the response.
 */
import { randomUUID } from 'node:crypto'
import type { Middleware } from '../types.js'

// Ids travel into logs and headers: accept only short, printable, unambiguous ones.
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The request id: a well-formed incoming X-Request-Id, else a new UUID. */
export function requestIdOf(incoming: string): string {
  return incoming !== '' && SAFE_ID.test(incoming) ? incoming : randomUUID()
}

export const requestId: Middleware = async (request, next) => {
  const id = requestIdOf(request.getHeaderLine('x-request-id'))
  const response = await next(request.withAttribute('request_id', id))
  return response.withHeader('x-request-id', id)
}
