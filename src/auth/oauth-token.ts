/**
 * The OAuth-style password grant (spec "Variation endpoints"): POST /oauth/token and the
 * middleware that loads its body. Its client errors are answered in RFC 6749 section 5.2's shape.
 */
import { HttpError } from '../runtime/http-error.js'
import type { FwRequest } from '../runtime/request/request.js'
import { json, type FwResponse } from '../runtime/response.js'
import type { Middleware } from '../runtime/types.js'
import type { Auth } from './auth.js'
import { bodyProblem, repeatedFormField } from './internal/body-fields.js'
import { NO_STORE, text } from './internal/handler-kit.js'
import { storeCall } from './internal/store-call.js'

/** /oauth/token answers expires_in 3600. */
export const OAUTH_TTL = 3600

/** The fields of the password grant, each at most once (RFC 6749 section 3.2). */
const OAUTH_FIELDS = ['grant_type', 'username', 'password', 'scope'] as const

export async function oauthToken(auth: Auth, request: FwRequest): Promise<FwResponse> {
  // The spec's two errors: a grant other than "password" (none given included) is
  // unsupported_grant_type; a password grant that fails its check (missing fields included)
  // is invalid_grant. A body that cannot be read, or repeats a parameter, is invalid_request
  // (RFC 6749 section 5.2), in the same shape: a client reads every error of this endpoint so.
  const problem = bodyProblem(request)
  if (problem !== null)
    return oauthError('invalid_request', problem.message, problem.status === 413 ? 413 : 400)
  const repeated = repeatedFormField(request, OAUTH_FIELDS)
  if (repeated !== null)
    return oauthError('invalid_request', `The parameter "${repeated}" is repeated`)
  const grant = text(request, 'grant_type')
  if (grant !== 'password')
    return oauthError(
      'unsupported_grant_type',
      grant === null
        ? 'grant_type is required; use "password"'
        : `The grant type "${grant.slice(0, 64)}" is not supported; use "password"`,
    )
  const username = text(request, 'username')
  const password = text(request, 'password')
  if (username === null || password === null)
    return oauthError('invalid_grant', 'username and password are required')
  const user = await storeCall(() => auth.checkCredentials(username, password))
  if (user === null) return oauthError('invalid_grant', 'Invalid username or password')
  const accessToken = await auth.issueFor(user, OAUTH_TTL)
  return json(
    {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: OAUTH_TTL,
      scope: 'read write',
    },
    200,
    NO_STORE,
  )
}

/**
 * The middleware of /oauth/token: loads the body before the handler (the kernel would load it
 * just after), so a body that fails to load (malformed JSON, an undecodable charset, over the
 * limit) is answered as RFC 6749 `invalid_request`, the endpoint's error shape, instead of the
 * kernel's `{error, code}` that an OAuth client cannot read.
 * @example
 * r.post('/oauth/token', handlers.oauthToken, { middleware: [oauthBody] })
 */
export const oauthBody: Middleware = async (request, next) => {
  if (!request.isBodyLoaded()) {
    try {
      await request.loadBody()
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error
      return oauthError('invalid_request', error.publicMessage, error.status === 413 ? 413 : 400)
    }
  }
  return next(request)
}

// An OAuth error is answered by the handler, not the error boundary: it carries the headers the
// boundary gives every error response (DESIGN: no-store and nosniff) itself.
const OAUTH_ERROR_HEADERS = { ...NO_STORE, 'x-content-type-options': 'nosniff' }

/**
 * An RFC 6749 section 5.2 error: 400 {error, error_description}, not cached, and JSON whatever the
 * Accept header asks for (the RFC allows no other format).
 */
function oauthError(error: string, description: string, status = 400): FwResponse {
  return json({ error, error_description: description }, status, OAUTH_ERROR_HEADERS)
}
