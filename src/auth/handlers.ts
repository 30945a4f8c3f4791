/**
 * The endpoint handlers (spec "Authentication endpoints", "Variation endpoints"): login, refresh,
 * me, logout; the refresh-token variation with rotation; the OAuth-style password grant; the
 * admin user list. Token responses carry `Cache-Control: no-store`; every 401 carries
 * `WWW-Authenticate: Bearer`.
 */
import { badRequest, HttpError, unauthorized } from '../runtime/http-error.js'
import type { FwRequest } from '../runtime/request/request.js'
import { json, noContent, type FwResponse } from '../runtime/response.js'
import type { Middleware } from '../runtime/types.js'
import type { Auth } from './auth.js'
import { assertReadableBody, bodyProblem, repeatedFormField } from './internal/body-fields.js'
import { storeCall } from './internal/store-call.js'
import { parseSubject } from './internal/token-shape.js'
import type { AccessTokenPayload } from './jwt.js'
import { MESSAGES, revocationCall } from './middleware.js'
import { publicUser, type UserRecord } from './stores/types.js'

/** Tokens of the refresh-token variation live 900 s (spec "Limits"). */
export const SHORT_TTL = 900
/** /oauth/token answers expires_in 3600. */
export const OAUTH_TTL = 3600
/** /auth/refresh accepts a token only in its last 300 s. */
export const REFRESH_WINDOW = 300

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }
const CHALLENGE = { 'www-authenticate': 'Bearer' }
const INVALID_TOKEN = { 'www-authenticate': 'Bearer error="invalid_token"' }

export const AUTH_MESSAGES = {
  credentialsRequired: 'Email and password are required',
  invalidCredentials: 'Invalid credentials',
  tokenRequired: 'Token is required',
  notEligible: 'Token is not eligible for refresh: it must be valid and expire within 300 seconds',
  refreshTokenRequired: 'refresh_token is required',
  invalidRefreshToken: 'Invalid or expired refresh token',
  notRevocable: 'This token has no jti and cannot be revoked',
} as const

type Handler = (request: FwRequest) => Promise<FwResponse>

export interface AuthHandlers {
  /** POST /auth/login → {token, user: {id, email, name}} */
  login: Handler
  /** POST /auth/refresh → {token}, only in the token's last 300 s */
  refresh: Handler
  /** GET /auth/me (behind 'auth') → the user record, without password_hash */
  me: Handler
  /**
   * POST /auth/logout (behind 'auth') → 204; the token's jti is revoked until it expires, and the
   * session of a `refresh_token` in the body (its family), when the same user owns it
   */
  logout: Handler
  /** POST /rt/auth/login → {access_token, refresh_token, expires_in: 900} */
  refreshTokenLogin: Handler
  /** POST /rt/auth/refresh → {access_token, refresh_token, expires_in: 900}; rotates */
  refreshTokenRefresh: Handler
  /** POST /oauth/token, grant_type=password → {access_token, token_type, expires_in, scope} */
  oauthToken: Handler
  /** GET /admin/users (behind 'auth', 'role:admin') → {users: [{id, email, name}]} */
  adminUsers: Handler
}

/** The fields of the password grant, each at most once (RFC 6749 section 3.2). */
const OAUTH_FIELDS = ['grant_type', 'username', 'password', 'scope'] as const

/** A non-empty string input, else null. */
function text(request: FwRequest, key: string): string | null {
  const value = request.input(key)
  return typeof value === 'string' && value !== '' ? value : null
}

function loginUser(user: UserRecord): { id: number; email: string; name: string } {
  return { id: user.id, email: user.email, name: user.name }
}

/**
 * @example
 * const { login, me } = createHandlers(auth)
 * r.post('/auth/login', login, 'auth.login')
 */
export function createHandlers(auth: Auth): AuthHandlers {
  async function credentials(request: FwRequest): Promise<UserRecord> {
    assertReadableBody(request)
    const email = text(request, 'email')
    const password = text(request, 'password')
    // Emails are compared trimmed, so one of blanks only is as missing as an empty one.
    if (email === null || email.trim() === '' || password === null)
      throw badRequest(AUTH_MESSAGES.credentialsRequired)
    const user = await storeCall(() => auth.checkCredentials(email, password))
    if (user === null) throw unauthorized(AUTH_MESSAGES.invalidCredentials, { headers: CHALLENGE })
    return user
  }

  async function currentUser(request: FwRequest): Promise<UserRecord> {
    const id = request.getAttribute('auth.user_id')
    const user = await storeCall(async () =>
      typeof id === 'number' ? (await auth.database()).users.findById(id) : null,
    )
    // The token verified but names no user (deleted since): the token is no good.
    if (user === null) throw unauthorized(MESSAGES.token, { headers: INVALID_TOKEN })
    return user
  }

  return {
    async login(request) {
      const user = await credentials(request)
      return json({ token: await auth.issueFor(user), user: loginUser(user) }, 200, NO_STORE)
    },

    async refresh(request) {
      assertReadableBody(request)
      const token = text(request, 'token')
      if (token === null) throw badRequest(AUTH_MESSAGES.tokenRequired)
      const eligible = await refreshable(auth, token)
      if (eligible === null) throw badRequest(AUTH_MESSAGES.notEligible)
      const access = await auth.tokenService().mint(eligible.userId)
      // A token of a refresh-token session (/rt) hands its place in the family to its successor;
      // of a session a theft or a logout ended (its revocation list write failed, or raced this
      // refresh), none is issued.
      const previous = eligible.jti
      if (
        previous !== undefined &&
        !(await storeCall(async () => (await auth.refreshTokens()).replaceAccess(previous, access)))
      )
        throw badRequest(AUTH_MESSAGES.notEligible)
      return json({ token: access.token }, 200, NO_STORE)
    },

    async me(request) {
      return json(publicUser(await currentUser(request)), 200, {
        'cache-control': 'private, no-store',
      })
    },

    async logout(request) {
      // A refresh_token in a body of another type (fetch() sends strings as text/plain) would be
      // read as none, and the session would outlive a logout answered 204: refuse it, revoke nothing.
      assertReadableBody(request)
      const payload = request.getAttribute('auth.payload') as AccessTokenPayload | undefined
      if (typeof payload?.jti !== 'string') throw badRequest(AUTH_MESSAGES.notRevocable)
      const jti = payload.jti
      // With the refresh-token variation the access token is half the session: a refresh_token
      // sent along is revoked too, or it would mint new access tokens for 30 days after logout.
      // Read first, so a malformed body is a 400 before anything is revoked.
      const refreshToken = request.input('refresh_token')
      const userId = request.getAttribute('auth.user_id')
      // The session before the token: if either fails (503), the client's retry with the same
      // token still gets past 'auth' and finishes the logout. Revoked first (also as one of the
      // session's access tokens), the token made that retry a 401, and the session outlived it.
      if (typeof refreshToken === 'string' && typeof userId === 'number')
        await storeCall(async () => (await auth.refreshTokens()).revoke(refreshToken, userId, jti))
      await revocationCall(async () => (await auth.tokenRevocations()).revoke(jti, payload.exp))
      return noContent()
    },

    async refreshTokenLogin(request) {
      const user = await credentials(request)
      // Minted first, to be recorded with the refresh token: a theft of its family revokes it.
      const access = await auth.mintFor(user, SHORT_TTL)
      const refreshToken = await storeCall(async () =>
        (await auth.refreshTokens()).issue(user.id, access),
      )
      return json(
        { access_token: access.token, refresh_token: refreshToken, expires_in: SHORT_TTL },
        200,
        NO_STORE,
      )
    },

    async refreshTokenRefresh(request) {
      assertReadableBody(request)
      const supplied = text(request, 'refresh_token')
      if (supplied === null) throw badRequest(AUTH_MESSAGES.refreshTokenRequired)
      const tokens = await storeCall(() => auth.refreshTokens())
      // The user is loaded before the token rotates: a store failure after rotation would lose
      // the successor, and the client's retry with the token it holds would look like theft.
      const owner = await storeCall(() => tokens.ownerOf(supplied))
      const user =
        owner === null
          ? null
          : await storeCall(async () => (await auth.database()).users.findById(owner))
      if (user === null)
        throw unauthorized(AUTH_MESSAGES.invalidRefreshToken, { headers: CHALLENGE })
      // Minted before the rotation, which records it with the successor (and discarded if none).
      const access = await auth.mintFor(user, SHORT_TTL)
      // On theft this revokes the family's refresh tokens and its live access tokens (see Auth).
      const outcome = await storeCall(() => tokens.rotate(supplied, access))
      if (outcome.status !== 'rotated')
        throw unauthorized(AUTH_MESSAGES.invalidRefreshToken, { headers: CHALLENGE })
      return json(
        { access_token: access.token, refresh_token: outcome.refreshToken, expires_in: SHORT_TTL },
        200,
        NO_STORE,
      )
    },

    async oauthToken(request) {
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
    },

    async adminUsers(request) {
      const limit = clampInt(request.query('limit'), 100, 1, 1000)
      const offset = clampInt(request.query('offset'), 0, 0, Number.MAX_SAFE_INTEGER)
      const users = await storeCall(async () =>
        (await auth.database()).users.list({ limit, offset }),
      )
      return json({ users: users.map(({ id, email, name }) => ({ id, email, name })) }, 200, {
        'cache-control': 'private, no-store',
      })
    },
  }
}

/**
 * The user id (and jti) of a token that verifies, is not revoked and has at most REFRESH_WINDOW
 * seconds left; else null. The old token's jti is revoked, so each token refreshes once.
 */
async function refreshable(
  auth: Auth,
  token: string,
): Promise<{ userId: number; jti?: string } | null> {
  const tokens = auth.tokenService()
  const payload = await tokens.verify(token)
  if (payload === null || payload.exp - tokens.nowSeconds() > REFRESH_WINDOW) return null
  const userId = parseSubject(payload.sub)
  if (userId === null) return null
  const user = await storeCall(async () => (await auth.database()).users.findById(userId))
  if (user === null) return null
  if (typeof payload.jti === 'string') {
    // Test-and-set: of concurrent refreshes of one token, one wins; a revoked token gets none.
    const jti = payload.jti
    if (
      !(await revocationCall(async () => (await auth.tokenRevocations()).revoke(jti, payload.exp)))
    )
      return null
    return { userId, jti }
  }
  return { userId }
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

/**
 * An RFC 6749 section 5.2 error: 400 {error, error_description}, not cached, and JSON whatever the
 * Accept header asks for (the RFC allows no other format).
 */
// An OAuth error is answered by the handler, not the error boundary: it carries the headers the
// boundary gives every error response (DESIGN: no-store and nosniff) itself.
const OAUTH_ERROR_HEADERS = { ...NO_STORE, 'x-content-type-options': 'nosniff' }

function oauthError(error: string, description: string, status = 400): FwResponse {
  return json({ error, error_description: description }, status, OAUTH_ERROR_HEADERS)
}

function clampInt(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : fallback
  return Math.min(max, Math.max(min, n))
}
