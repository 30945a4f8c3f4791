/**
 * How many bytes a multipart body may carry as received: its files and fields, and the framing
 * around them. The parser (multipart.ts) counts against these; the body reader refuses a
 * declared Content-Length over the limit before reading.
 */
import type { BodyLimits } from '../types.js'

const KIB = 1024
const MIB = 1024 * KIB

/**
 * Bytes a multipart body may carry besides its field values and file contents (boundaries, part
 * headers, a preamble or an epilogue): 1 KiB a part plus 1 MiB, about 2 MiB by default. The
 * 1 MiB also covers file bytes still in stream buffers when they are counted (a few 64 KiB chunks).
 * @example
 * multipartOverhead(DEFAULT_BODY_LIMITS) // 2,093,056
 */
export function multipartOverhead(limits: BodyLimits): number {
  return MIB + KIB * limits.parts
}

/**
 * The most bytes one multipart body may have, as received: all files, all fields and the
 * overhead (about 53 MiB by default). A declared Content-Length over it is refused up front.
 * @example
 * checkDeclaredLength(contentLength, multipartLimit(limits))
 */
export function multipartLimit(limits: BodyLimits): number {
  return limits.totalFileSize + limits.body + multipartOverhead(limits)
}
