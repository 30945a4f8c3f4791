/**
 * The access log (KernelOptions.accessLog): one `info` line per request answered over node:http,
 * with pino-http's fields, once its response is sent in full ("request completed") or its client
 * left before ("request aborted"). Never a header value or a body; the target's credentials (a
 * signed URL's `_sig`, a `token` parameter, a JWT) `[Redacted]`.
 */
import type { ServerResponse } from 'node:http'
import { onceGone } from './gone.js'
import { redactTarget } from './logger.js'
import { clientAddress } from './middleware/client-ip.js'
import { requestIdFor, safeRequestId } from './middleware/request-id.js'
import type { FwRequest } from './request/request.js'
import { unmapAddress } from './request/uri.js'
import type { Logger } from './types.js'

export const COMPLETED = 'request completed'
export const ABORTED = 'request aborted'

/** The fields of an access log line. */
export interface AccessEntry {
  req: {
    /** The request id (X-Request-Id), when it has one. */
    id?: string | undefined
    /** The method as received (before X-Http-Method-Override). */
    method: string
    /** The request target as received (path and query), its credentials redacted. */
    url: string
    /** The client's address, as `client_ip` resolves it through trusted proxies. */
    remoteAddress: string
  }
  /** The status sent; null when the client left before it was. */
  res: { statusCode: number | null }
  /** Milliseconds from the request's arrival to its response sent, or its client gone. */
  responseTime: number
}

/**
 * Logs `res`'s exchange through `log` once it is over (one 'close' listener, see onceGone).
 * `request` (absent when the request was refused before one could be made) is returned with the
 * request id its line will carry, for the kernel's request context to take (`presetRequestId`):
 * a line for a client that left before its answer names the id the app's own lines carry.
 * @example
 * if (kernel.accessLog) request = logExchange(kernel.log, res, request, true)
 */
export function logExchange<R extends FwRequest | undefined>(
  log: Logger,
  res: ServerResponse,
  request: R,
  presetId: boolean,
): R {
  const started = performance.now()
  const req = res.req
  const id = request !== undefined && presetId ? requestIdFor(request) : undefined
  // Read now: a closed socket has no address any more.
  const remoteAddress =
    request !== undefined ? clientAddress(request) : (unmapAddress(req.socket.remoteAddress) ?? '')
  onceGone(res, () => {
    // Ended and handed to the connection whole (node:http2 calls a cancelled stream finished).
    const sent = res.writableEnded && res.writableFinished
    const header = res.getHeader('x-request-id')
    const entry: AccessEntry = {
      req: {
        id:
          (typeof header === 'string' ? header : id) ?? safeRequestId(req.headers['x-request-id']),
        method: req.method ?? '',
        url: redactTarget(req.url ?? ''),
        remoteAddress,
      },
      res: { statusCode: res.headersSent ? res.statusCode : null },
      responseTime: Math.round((performance.now() - started) * 1000) / 1000,
    }
    log.info(entry, sent ? COMPLETED : ABORTED)
  })
  return (id === undefined ? request : request!.withAttributes({ request_id: id })) as R
}
