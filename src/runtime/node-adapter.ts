/**
 * Connects the kernel to node:http: builds the request, lets the kernel answer, writes the
 * response (strings and bytes with Content-Length, streams piped), and removes uploaded temp
 * files once the response is done. The kernel is looked up per request, so a watcher can swap it
 * without dropping in-flight requests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream'
import type { Kernel } from './kernel.js'
import { FwRequest } from './request/request.js'
import { FwResponse } from './response.js'

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void

export interface ListenerOptions {
  /**
   * For the server's 'checkContinue' event (requests sent with `Expect: 100-continue`, which
   * Node otherwise answers with "100 Continue" at once): the 100 is sent only when the body is
   * about to be read, so a request refused before (401, 404, a declared length over the limit:
   * 413) is answered without the client uploading its body.
   */
  expectContinue?: boolean
}

/**
 * @example
 * const server = http.createServer(createListener(() => kernel))
 * server.on('checkContinue', createListener(() => kernel, { expectContinue: true }))
 * server.listen(3000)
 */
export function createListener(current: () => Kernel, options: ListenerOptions = {}): NodeListener {
  const expectContinue = options.expectContinue === true
  // Made once per listener, so a request allocates no closure to be answered. They log through
  // current(): after a watch swap, the new kernel's logger, the same one.
  const reply = (response: FwResponse, request: FwRequest, res: ServerResponse): void => {
    try {
      // Uploaded temp files go once the response is sent or the client went away ('close').
      if (request.needsCleanup()) res.once('close', () => void request.cleanup())
      if (!request.isBodyLoaded() && !res.req.complete && !worthDraining(request)) res.shouldKeepAlive = false
      send(res, response, current())
    } catch (error) {
      fail(error, request, res)
    }
  }
  const fail = (error: unknown, _request: FwRequest, res: ServerResponse): void => {
    current().log.error({ err: error }, 'The kernel failed to answer')
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
    res.end('{"error":"Internal Server Error","code":500}')
  }
  return (req, res) => {
    const kernel = current()
    let request: FwRequest
    try {
      const beforeBody = expectContinue ? () => res.writeContinue() : undefined
      request = FwRequest.fromNode(req, kernel.requestOptions, beforeBody)
    } catch (error) {
      kernel.log.warn({ err: error }, 'Unparseable request')
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      res.end('{"error":"Bad Request","code":400}')
      return
    }
    // The response is written from the kernel's own reaction to the pipeline (or at once, when
    // every step answered synchronously): no second promise just to write it.
    try {
      void kernel.respondTo(request, res, reply, fail)
    } catch (error) {
      fail(error, request, res)
    }
  }
}

// Node reads whatever is left of a request body after the response, to reuse the connection
// (a 413 for a declared gigabyte would read the gigabyte). Up to this much that is worth it, as
// in Go's net/http; beyond it, or when the length is unknown (chunked), the connection closes.
const DRAIN_LIMIT = 256 * 1024

/** Whether the unread rest of `request`'s body is small enough to read and discard. */
function worthDraining(request: FwRequest): boolean {
  const declared = request.getHeaderLine('content-length')
  return declared !== '' && Number(declared) <= DRAIN_LIMIT
}

/** Writes a response. Hot path: keep it to one writeHead and one end for in-memory bodies. */
function send(res: ServerResponse, response: FwResponse, kernel: Kernel): void {
  const body = response.body
  // Everything goes into writeHead, Content-Length included: a setHeader() before it would send
  // Node down its slow path (every header re-validated and stored one by one).
  const headers = FwResponse.wireHeaders(response) as Record<string, string | string[]> | (string | string[])[]
  res.writeHead(response.status, headers)
  if (body === null || typeof body === 'string' || body instanceof Uint8Array) {
    res.end(body ?? undefined)
    return
  }
  pipeline(body, res, (error) => {
    if (error) kernel.log.warn({ err: error }, 'Streaming the response body failed')
  })
}
