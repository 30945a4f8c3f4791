/**
 * Requests fw refuses at the wire, before the kernel sees them, each answered with an error like
 * fw's others (negotiated from Accept, with the request id, once Node parsed the headers) and
 * then the connection closed: what Node's parser refuses ('clientError'),
 * what it accepts although fw cannot serve it (a header list it cut short, an HTTP/1.1 request
 * without Host, a Transfer-Encoding it cannot frame the body by), CONNECT, and an unknown
 * expectation.
 * Answers go out in request order (RFC 9112 §9.3.2). `attachKernel` (node-adapter.ts) wires them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { ERROR_HEADERS, renderError } from './error-boundary.js'
import { HttpError } from './http-error.js'
import { silentLogger } from './logger.js'
import { safeRequestId } from './middleware/request-id.js'
import { isName } from './request/headers.js'

/** A status and the message of its JSON error body. */
export type Refusal = readonly [status: number, message: string]

export const BAD_REQUEST: Refusal = [400, 'Bad Request']
const NOT_IMPLEMENTED: Refusal = [501, 'Not Implemented']
const MISSING_HOST: Refusal = [400, 'An HTTP/1.1 request needs a Host header']
const TOO_MANY_HEADERS: Refusal = [431, 'Too many header fields']
const UNKNOWN_CODING: Refusal = [501, 'Transfer-Encoding other than chunked is not supported']
// RFC 9112 §6.3: chunked must be the last coding, and HTTP/1.0 has none (§6.1).
const NOT_CHUNKED: Refusal = [400, 'Transfer-Encoding must be chunked, in HTTP/1.1']
export const EXPECTATION_FAILED: Refusal = [417, 'Only the expectation 100-continue is supported']
// RFC 9112 §3.2.2: the absolute form names an http or https URI; `ftp://acme.example.com/x` was
// routed as acme's request.
const OTHER_SCHEME: Refusal = [400, 'The request target names a scheme other than http or https']
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
const HTTP_SCHEME = /^https?:\/\//i
const JSON_TYPE = 'application/json; charset=utf-8'

// Node's parser keeps a header list only up to 2 × maxHeadersCount entries of rawHeaders (in
// batches of 32 fields, so a cut list is at least that long); unset, 2000 entries (1000 fields,
// though Node documents 2000); 0 is no limit.
const DEFAULT_HEADER_ENTRIES = 2000

/**
 * Why a request Node's parser accepted must still be refused before routing, or null: a header
 * list Node cut short (431: never lose a header or its body), an HTTP/1.1 request without Host
 * (RFC 9112 §3.2), a Transfer-Encoding fw cannot frame by (`codingRefusal`), an absolute-form
 * target of another scheme than http or https (400). Hot path: one pass
 * over the raw headers, comparing lengths before names.
 */
export function refusalOf(req: IncomingMessage): Refusal | null {
  const raw = req.rawHeaders
  if (raw.length >= headerEntryLimit(req)) return TOO_MANY_HEADERS
  let host = false
  let coding = false
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4) host ||= isName(name, 'host')
    else coding ||= isName(name, 'transfer-encoding')
  }
  if (!host && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) return MISSING_HOST
  const framing = coding ? codingRefusal(req) : null
  if (framing !== null) return framing
  // Every client sends the origin form, `/path`: only another target is looked at.
  const target = req.url ?? '/'
  return target.charCodeAt(0) !== 47 && SCHEME.test(target) && !HTTP_SCHEME.test(target)
    ? OTHER_SCHEME
    : null
}

/**
 * Why the Transfer-Encoding of a request makes its body unreadable, or null when it is chunked
 * (RFC 9112 §6.1, §6.3): a coding other than chunked is 501; no coding at all (an empty field,
 * which Node lets Content-Length frame) is 400, as chunked must come last; and so is any in
 * HTTP/1.0 (or the 0.9 and 2.0 request lines Node also takes), whose framing is faulty whatever
 * it says. A front end that frames such a request otherwise would read another request in its
 * body (smuggling); refused, the connection closes.
 */
function codingRefusal(req: IncomingMessage): Refusal | null {
  if (req.httpVersion !== '1.1') return NOT_CHUNKED
  const raw = req.rawHeaders
  let chunked = false
  for (let i = 0; i < raw.length; i += 2) {
    if (!isName(raw[i]!, 'transfer-encoding')) continue
    for (const coding of raw[i + 1]!.split(',')) {
      const name = coding.trim().toLowerCase()
      if (name !== '' && name !== 'chunked') return UNKNOWN_CODING
      chunked ||= name !== ''
    }
  }
  return chunked ? null : NOT_CHUNKED
}

function headerEntryLimit(req: IncomingMessage): number {
  const server = (req.socket as { server?: { maxHeadersCount?: number | null } } | null)?.server
  const count = server?.maxHeadersCount
  if (typeof count !== 'number') return DEFAULT_HEADER_ENTRIES
  return count > 0 ? count * 2 : Infinity
}

/**
 * Answers a refused request with its error and closes the connection: what follows the head (a
 * body Node may have cut loose from its headers, or cannot frame) is not read as a request. Its
 * headers were parsed, so the body is negotiated from Accept and carries a well-formed
 * X-Request-Id, as the error boundary's answers do (`refusalAnswer`).
 */
export function refuse(res: ServerResponse, refusal: Refusal): void {
  const { headers, body } = refusalAnswer(refusal, res.req)
  // HTTP/2 (node:http2's compatibility API) ends the stream only: the connection carries other
  // requests, and has no Connection field (Node drops it, with a warning).
  if (res.req.httpVersionMajor === 2) return void res.writeHead(refusal[0], headers).end(body)
  // The request's: res.socket is null while a pipelined response before this one is being sent.
  lingerOnClose(res.req.socket)
  res.writeHead(refusal[0], { ...headers, connection: 'close' })
  res.end(body)
}

/**
 * The headers and body of a refusal. Without a parsed request (Node's parser gave up), the JSON
 * `{error, code}`; with one, the error boundary's rendering: the format its Accept asks for
 * (JSON, problem+json or text/plain), its well-formed X-Request-Id echoed and in the body.
 * @example
 * refusalAnswer(EXPECTATION_FAILED, req) // { headers: {...}, body: '{"error":...,"code":417}' }
 */
export function refusalAnswer(
  [status, message]: Refusal,
  req?: IncomingMessage,
): { headers: Record<string, string>; body: string } {
  if (req === undefined) {
    const body = JSON.stringify({ error: message, code: status })
    return { headers: jsonErrorHeaders(body), body }
  }
  const requestId = safeRequestId(req.headers['x-request-id'])
  const rendered = renderError(new HttpError(status, { message, expose: true }), {
    accept: req.headers.accept ?? '',
    // problem+json's `instance`: the target without its query (a URI reference in any form).
    path: (req.url ?? '/').split('?', 1)[0]!,
    requestId,
    debug: false,
    log: silentLogger,
  })
  const body = rendered.body as string
  const headers = { ...(rendered.headers as Record<string, string>) }
  headers['content-length'] = `${Buffer.byteLength(body)}`
  if (requestId !== undefined) headers['x-request-id'] = requestId
  return { headers, body }
}

// How long a connection closed with request bytes unread is still read from (Apache lingers 2 s).
const LINGER_MS = 2000

/**
 * Makes Node close `socket` in stages once the response is sent (RFC 9112 §9.6), when the client
 * may still be sending (a body not read: a 413 for a declared length over the limit): a close
 * with bytes unread makes the system send a reset, and the client's system then drops the
 * response before it is read (EPIPE/ECONNRESET instead of the 413). Half-closed, the connection
 * is read (and the bytes discarded) until the client closes its side or LINGER_MS pass.
 */
export function lingerOnClose(socket: Socket | null): void {
  if (socket === null) return
  // Node calls it after the last response on the connection (resOnFinish).
  socket.destroySoon = () => {
    socket.end()
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    socket.once('end', () => socket.destroy())
    socket.once('close', () => clearTimeout(timer))
  }
}

/**
 * The headers of a JSON error body written outside the error boundary: its type and length, and
 * the boundary's own (no-store, nosniff).
 * @example
 * res.writeHead(500, jsonErrorHeaders(body)).end(body)
 */
export function jsonErrorHeaders(body: string): Record<string, string> {
  return {
    'content-type': JSON_TYPE,
    'content-length': String(Buffer.byteLength(body)),
    ...ERROR_HEADERS,
  }
}

// Node's own answers to requests it cannot parse, as JSON like every other error of fw.
const CLIENT_ERRORS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Content Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
}
const URI_TOO_LONG: Refusal = [414, 'URI Too Long']

/** What 'clientError' receives: Node adds the bytes of the failing read and where it stopped. */
type ParserError = NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: number }

/** A socket of node:http: the response being written on it, if any. */
type HttpSocket = Duplex & { _httpMessage?: ServerResponse | null }

// Node calls 'clientError' again for every later read on a connection whose parser failed.
const failedSockets = new WeakSet<Duplex>()

/** A refused request's answer, written at the wire: what the access log is told of it. */
export interface WireAnswer {
  status: number
  /**
   * The failing request's own response, when Node had made one (its body was malformed): that
   * request has its own access log line.
   */
  failing: ServerResponse | null
  /** The method and target of its request line, when that could be read. */
  method?: string | undefined
  target?: string | undefined
  /** Node's parser error. */
  error?: unknown
}

/** Called once a refused request's answer is written (node-adapter.ts: the access log). */
export type WireAnswered = (answer: WireAnswer) => void

/**
 * For the server's 'clientError' event (a request Node's parser refused: malformed, headers over
 * the size limit, too slow): the status Node itself would send, or the one RFC 9110/9112 names
 * (414 for a request-target over the limit, 501 for an unknown method), with a JSON body like
 * fw's other errors, after the responses to the requests before it (RFC 9112 §9.3.2: in order);
 * then the connection closes. A response already started for the failing request itself (its
 * body was malformed) can only be cut off. `answered` is told of the answer once it is written
 * (`attachKernel` logs it when the access log is on); a connection the client reset gets none.
 * @example
 * server.on('clientError', answerClientError)
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  answered?: WireAnswered,
): void {
  if (failedSockets.has(socket)) return
  failedSockets.add(socket)
  const refusal = clientErrorAnswer(error)
  // A client that left (ECONNRESET, or HPE_INVALID_EOF_STATE: the connection ended inside a
  // request) or reset an idle keep-alive connection was refused nothing: answered as Node
  // does, but not reported.
  const refused = answered !== undefined && isParserError(error)
  answerInTurn(socket, refusal, undefined, (failing) => {
    if (refused) answered({ status: refusal[0], failing, error, ...refusedLine(error, socket) })
  })
}

/** Whether Node's parser refused what it read (or it came too slowly), not the connection. */
function isParserError(error: NodeJS.ErrnoException): boolean {
  const code = error.code ?? ''
  if (code === 'HPE_INVALID_EOF_STATE') return false
  return code.startsWith('HPE_') || Object.hasOwn(CLIENT_ERRORS, code)
}

/**
 * For the server's 'connect' event: fw is no proxy, so CONNECT is a method it does not implement
 * (501, RFC 9110 §9.1), answered in turn like a parse failure; `answered` as answerClientError's.
 */
export function answerConnect(
  req: IncomingMessage,
  target: Duplex | ServerResponse,
  answered?: WireAnswered,
): void {
  // node:http2 emits 'connect' with the stream's response, not a socket: the bytes of an
  // HTTP/1.1 answer written there were the body of an implicit 200.
  if (req.httpVersionMajor === 2) return refuse(target as ServerResponse, NOT_IMPLEMENTED)
  const socket = target as Duplex
  // Node has taken its own listeners off the socket: a reset must not crash the process.
  socket.on('error', () => socket.destroy())
  answerInTurn(socket, NOT_IMPLEMENTED, req, () =>
    answered?.({ status: NOT_IMPLEMENTED[0], failing: null, method: req.method, target: req.url }),
  )
}

/**
 * Writes `answer` on `socket` once no response is in flight there, then closes it; `written`
 * runs once it is written, with the failing request's own response if it has one. A response in
 * flight whose request has not ended is the failing request's own: it gets `answer` unless it
 * has started. When the connection closes first, there is nothing to answer.
 */
function answerInTurn(
  socket: HttpSocket,
  answer: Refusal,
  req: IncomingMessage | undefined,
  written: (failing: ServerResponse | null) => void,
): void {
  const inFlight = socket._httpMessage
  if (inFlight == null || !inFlight.req.complete) {
    if (socket.writable && inFlight?.headersSent !== true) {
      socket.write(rawAnswer(answer, req))
      written(inFlight ?? null)
    }
    socket.destroy()
    return
  }
  // Node's own 'finish' listener (added first) has by then handed the socket to the next one.
  const next = (): void => {
    inFlight.off('finish', next)
    socket.off('close', next)
    if (socket.destroyed) return
    answerInTurn(socket, answer, req, written)
  }
  inFlight.once('finish', next)
  socket.once('close', next)
}

/**
 * A refusal as the bytes of a whole response, for a socket Node's parser has given up on (no
 * `req`), or one taken from Node (CONNECT, whose head was parsed: negotiated as `refuse` does).
 */
function rawAnswer(refusal: Refusal, req?: IncomingMessage): string {
  const [status, reason] = refusal
  const answer = refusalAnswer(refusal, req)
  // Date as Node adds it to its own responses: RFC 9110 §6.6.1 wants it on every 4xx.
  const headers = { ...answer.headers, connection: 'close', date: new Date().toUTCString() }
  const body = answer.body
  let head = `HTTP/1.1 ${status} ${reason}\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  return `${head}\r\n${body}`
}

function clientErrorAnswer(error: ParserError): Refusal {
  if (error.code === 'HPE_HEADER_OVERFLOW' && inRequestLine(error)) return URI_TOO_LONG
  if (error.code === 'HPE_INVALID_METHOD' && hasUnknownMethod(lineAt(error))) return NOT_IMPLEMENTED
  return CLIENT_ERRORS[error.code ?? ''] ?? BAD_REQUEST
}

// A method (a token), a space and the start of a target.
const REQUEST_LINE_START = /^[!#$%&'*+.^_`|~\dA-Za-z-]+ [^\s]/
// RFC 9112 §3: method SP request-target SP HTTP-version.
const REQUEST_LINE = /^[!#$%&'*+.^_`|~\dA-Za-z-]+ [^\s]+ HTTP\/\d\.\d\r?$/

/**
 * Whether the line the parser refused for its method is a request line (an unknown or lowercase
 * method: 501) rather than bytes that are no request at all (400). A line not ended yet in the
 * failing read is judged by its start.
 */
function hasUnknownMethod(line: { text: string; ended: boolean }): boolean {
  return (line.ended ? REQUEST_LINE : REQUEST_LINE_START).test(line.text)
}

/** The failing read as text, and where in it the parser stopped. */
function failingRead(error: ParserError): { text: string; at: number } {
  const packet = error.rawPacket
  if (!Buffer.isBuffer(packet)) return { text: '', at: 0 }
  const text = packet.toString('latin1')
  return { text, at: Math.min(error.bytesParsed ?? text.length, text.length) }
}

// A character of a token (RFC 9110 §5.6.2), such as a method.
const TOKEN_CHAR = /[!#$%&'*+.^_`|~\dA-Za-z-]/

/**
 * The line of the failing read where the parser stopped, from the start of the token it stopped
 * in, and whether it ends there. Not from the start of the line: in a pipelined read the
 * refused request line may follow the body of the request before it (`{"a":1}BREW / HTTP/1.1`).
 */
function lineAt(error: ParserError): { text: string; ended: boolean } {
  const { text, at } = failingRead(error)
  return lineFrom(text, tokenStart(text, at))
}

function tokenStart(text: string, at: number): number {
  let start = at
  while (start > 0 && TOKEN_CHAR.test(text[start - 1]!)) start--
  return start
}

function lineFrom(text: string, start: number): { text: string; ended: boolean } {
  const end = text.indexOf('\n', start)
  return { text: text.slice(start, end === -1 ? text.length : end), ended: end !== -1 }
}

// A request line as the access log shows it: a method of capital letters (a lowercase one, 501,
// is not told from the tail of a body sent before it), its target, and the version once the
// line ended.
const SHOWN_LINE = /^([A-Z][A-Z_-]{0,23}) ([^\s]+) HTTP\/\d\.\d\r?$/
const SHOWN_LINE_START = /^([A-Z][A-Z_-]{0,23}) ([^\s]+)$/

/**
 * The method and target of the request the parser refused, for the access log, when the failing
 * read holds its request line: at the token the parser stopped in for a refused method, else
 * after the last request that ended in the read (its empty line) or at the read's start. A line
 * cut short (a target over the size limit) counts only at the connection's first byte: the read
 * may start in the middle of a header, whose value must not be shown as a target.
 */
function refusedLine(error: ParserError, socket: Duplex): { method?: string; target?: string } {
  const { text, at } = failingRead(error)
  // The last empty line that ends before `at` (the one ending the refused head may follow it).
  const blank = at < 4 ? -1 : text.lastIndexOf('\r\n\r\n', at - 4)
  const start =
    error.code === 'HPE_INVALID_METHOD' ? tokenStart(text, at) : blank === -1 ? 0 : blank + 4
  const line = lineFrom(text, start)
  const first = start === 0 && (socket as { bytesRead?: number }).bytesRead === text.length
  const match = line.ended
    ? SHOWN_LINE.exec(line.text)
    : first
      ? SHOWN_LINE_START.exec(line.text)
      : null
  return match === null ? {} : { method: match[1]!, target: match[2]! }
}

/**
 * Whether the header size limit was hit in the request line (414, RFC 9112 §3) rather than in
 * the fields (431). Node reports only the failing read, of which the failing request is what
 * follows its last empty line (requests pipelined before it end there): its parsed part has no
 * line end and no space after the method's (a long header value split over reads has spaces,
 * cookies do), or it starts with a request line that is most of it.
 */
function inRequestLine(error: ParserError): boolean {
  const { text: read, at } = failingRead(error)
  const parsed = read.slice(0, at)
  const blank = parsed.lastIndexOf('\r\n\r\n')
  const text = blank === -1 ? parsed : parsed.slice(blank + 4)
  const lineEnd = text.indexOf('\n')
  if (lineEnd === -1) return !/[ \t]/.test(text.slice(text.indexOf(' ') + 1))
  return REQUEST_LINE_START.test(text) && lineEnd > text.length / 2
}
