/**
 * Reading a request body off the wire: Content-Encoding, size limits counted after
 * decompression (and, for a compressed body, as received too), and leaving the connection
 * usable when we stop early.
 */
import type { Readable, Transform } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { badRequest, HttpError, payloadTooLarge, unsupportedMediaType } from '../http-error.js'
import { BodyBytes } from './body-bytes.js'

/** A body being read: the decoded bytes, and what to do when we stop or the client leaves. */
export interface BodyStream {
  /** Decoded (decompressed) bytes. */
  readonly stream: Readable
  /** Detaches after a failure and drains the rest, so a keep-alive connection stays usable. */
  stop(): void
  /** Calls `listener` once if the client goes away before the body ended. */
  onAbort(listener: (error: HttpError) => void): void
}

const DECODERS: Record<string, (() => Transform) | undefined> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
}

/**
 * Wraps `origin` in the decoder its Content-Encoding names. Anything else than identity, gzip,
 * deflate or br (including a list of several) is a 415, before a byte is read. A compressed body
 * fails with a 413 once more than `wireLimit` bytes were received (the reader counts decoded
 * bytes; an identity body's are the same).
 */
export function openBody(
  origin: Readable,
  contentEncoding: string | undefined,
  wireLimit: number,
): BodyStream {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  const create = encoding === 'identity' || encoding === '' ? null : DECODERS[encoding]
  if (create === undefined) throw unsupportedMediaType(`Unsupported Content-Encoding: ${encoding}`)
  // Its 'end' is gone: waiting for it would hang the request forever.
  if (origin.readableEnded) throw new Error('The request body was already read elsewhere')
  const decoder = create?.() ?? null
  let ended = false
  origin.once('end', () => (ended = true))
  if (decoder) {
    limitReceived(origin, decoder, wireLimit)
    origin.pipe(decoder)
  }
  return {
    stream: decoder ?? origin,
    stop: () => {
      if (decoder) {
        origin.unpipe(decoder)
        decoder.destroy()
      }
      if (!origin.destroyed) origin.resume()
    },
    onAbort: (listener) => {
      const abort = (): void => {
        if (!ended) listener(aborted())
      }
      if (origin.destroyed) return abort()
      origin.once('close', abort)
      origin.on('error', abort)
    },
  }
}

/**
 * Fails `decoder` with a 413 past `limit` bytes of `origin`: compression can also make a body
 * larger than what it decodes to (empty deflate blocks, 5 bytes each, decode to nothing).
 */
function limitReceived(origin: Readable, decoder: Transform, limit: number): void {
  let size = 0
  const onData = (chunk: Buffer): void => {
    size += chunk.length
    if (size <= limit) return
    origin.off('data', onData)
    origin.unpipe(decoder)
    decoder.destroy(tooLarge(limit))
  }
  origin.on('data', onData)
}

/**
 * Reads an identity-encoded body to the end and hands it to `use`: the common case (JSON,
 * forms), without a decoder stream in between, in one promise whose listeners go away when it
 * settles. The rules are `openBody` + `readAll`'s: past `limit` bytes a 413 and the rest drained
 * (the keep-alive connection stays usable); the client leaving first a 400; a stream error a 400.
 */
export function readPlain(
  origin: Readable,
  limit: number,
  use: (body: Buffer) => void,
): Promise<void> {
  if (origin.readableEnded) throw new Error('The request body was already read elsewhere')
  return new Promise((resolve, reject) => {
    const bytes = new BodyBytes()
    const settle = (error?: HttpError): void => {
      origin.off('data', onData)
      origin.off('end', onEnd)
      origin.off('error', onError)
      origin.off('close', onClose)
      // `use` runs before the promise settles (what it throws rejects it), so no extra
      // microtask carries the bytes on.
      if (!error) {
        try {
          use(bytes.bytes())
        } catch (failure) {
          return reject(failure)
        }
        return resolve()
      }
      if (!origin.destroyed) origin.resume()
      reject(error)
    }
    const onData = (chunk: Buffer): void => {
      if (bytes.size + chunk.length > limit) return settle(tooLarge(limit))
      bytes.add(chunk)
    }
    const onEnd = (): void => settle()
    const onError = (error: unknown): void => settle(decodeError(error))
    const onClose = (): void => settle(aborted())
    if (origin.destroyed) return onClose()
    origin.on('data', onData)
    origin.on('end', onEnd)
    origin.on('error', onError)
    origin.on('close', onClose)
  })
}

/** 413 up front when a declared Content-Length is already over `limit` (nothing is read). */
export function checkDeclaredLength(contentLength: string | undefined, limit: number): void {
  if (contentLength === undefined || !isDigits(contentLength)) return
  if (Number(contentLength) > limit) throw tooLarge(limit)
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

/**
 * Reads the decoded body to the end. Counting continues while streaming because chunked bodies
 * declare no length and compressed ones lie about it: past `limit` bytes we stop at once.
 */
export function readAll(body: BodyStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const bytes = new BodyBytes()
    let settled = false
    const finish = (error?: HttpError): void => {
      if (settled) return
      settled = true
      body.stream.off('data', onData)
      if (!error) return resolve(bytes.bytes(true))
      body.stop()
      reject(error)
    }
    const onData = (chunk: Buffer): void => {
      if (bytes.size + chunk.length > limit) return finish(tooLarge(limit))
      bytes.add(chunk)
    }
    body.stream.on('data', onData)
    body.stream.once('end', () => finish())
    body.stream.on('error', (error) => finish(decodeError(error)))
    body.onAbort(finish)
  })
}

function aborted(): HttpError {
  return badRequest('Request body aborted by the client')
}

export function tooLarge(limit: number): HttpError {
  return payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`)
}

/** Errors of a decoder are the client's malformed data; others mean the stream broke. */
export function decodeError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  const code = String((error as NodeJS.ErrnoException | undefined)?.code ?? '')
  // Node's request stream fails with ECONNRESET ("aborted") when the client leaves mid-body.
  if (code === 'ECONNRESET') return aborted()
  const compressed = code.startsWith('Z_') || code.includes('BROTLI') || code.startsWith('ERR__')
  return badRequest(compressed ? 'Malformed compressed body' : 'Request body could not be read', {
    cause: error,
  })
}
