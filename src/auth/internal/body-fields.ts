/**
 * What the endpoints check of a request body before reading fields from it. They take JSON (the
 * spec's) and form bodies (HTML forms, OAuth clients); a body of another type is refused, instead
 * of being read as no fields at all ("email and password are required" for a body that holds
 * them). The OAuth endpoint answers these problems in RFC 6749's shape (see oauth-token.ts).
 */
import { HttpError, unsupportedMediaType } from '../../runtime/http-error.js'
import { bodyKind } from '../../runtime/request/content.js'
import type { FwRequest } from '../../runtime/request/request.js'

const ACCEPTED = 'application/json, application/x-www-form-urlencoded or multipart/form-data'

/**
 * Throws the runtime's error for a body it cannot parse (400 malformed, 413 too large, 415
 * charset), and 415 for content of a type it does not parse (text/plain, XML, none given).
 */
export function assertReadableBody(request: FwRequest): void {
  if (request.getParsedBody() !== null || request.getContent() === '') return
  // JSON that parsed to `null` was read: it holds no fields ("required"), it is no media-type error.
  if (bodyKind(request.getHeaderLine('content-type') || undefined) === 'json') return
  const type = request.getHeaderLine('content-type').split(';')[0]!.trim().toLowerCase()
  throw unsupportedMediaType(
    `Unsupported media type "${type.slice(0, 64) || 'none'}": send ${ACCEPTED}`,
  )
}

/** The client error that makes the body unreadable (status and public message), or null. */
export function bodyProblem(request: FwRequest): { status: number; message: string } | null {
  try {
    assertReadableBody(request)
    return null
  } catch (error) {
    if (error instanceof HttpError && error.status < 500)
      return { status: error.status, message: error.publicMessage }
    throw error
  }
}

/**
 * The first of `names` that a urlencoded body holds more than once (RFC 6749 section 3.2:
 * "parameters MUST NOT be included more than once"), else null. The parsed input keeps the last
 * value only, so a repeat would otherwise pass unnoticed.
 */
export function repeatedFormField(request: FwRequest, names: readonly string[]): string | null {
  const type = request.getHeaderLine('content-type').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return null
  const fields = new URLSearchParams(request.getContent())
  return names.find((name) => fields.getAll(name).length > 1) ?? null
}
