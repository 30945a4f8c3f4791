/**
 * The endpoint handlers (spec "Authentication endpoints", "Variation endpoints"): login, refresh,
 * me, logout; the refresh-token variation with rotation; the OAuth-style password grant (in
 * oauth-token.ts); the admin user list. Token responses carry `Cache-Control: no-store`; every 401
 * carries `WWW-Authenticate: Bearer`.
 */
import { badRequest, unauthorized } from '../runtime/http-error.js'
import type { FwRequest } from '../runtime/request/request.js'
import { json, noContent, type FwResponse } from '../runtime/response.js'
import type { Auth } from './auth.js'
import { assertReadableBody } from './internal/body-fields.js'
import { NO_STORE, text } from './internal/handler-kit.js'
import { storeCall } from './internal/store-call.js'
import { parseSubject } from './internal/token-shape.js'
import type { AccessTokenPayload } from './jwt.js'
import { MESSAGES, revocationCall } from './middleware.js'
import { oauthToken } from './oauth-token.js'
import { publicUser, type UserRecord } from './stores/types.js'

export { NO_STORE } from './internal/handler-kit.js'
export { OAUTH_TTL, oauthBody } from './oauth-token.js'

/** Tokens of the refresh-token variation live 900 s (spec "Limits"). */
export const SHORT_TTL = 900
/** /auth/refresh accepts a token only in its last 300 s. */
export const REFRESH_WINDOW = 300

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

function loginUser(user: UserRecord): { id: number; email: string; name: string } {
  return { id: user.id, email: user.email, name: user.name }
}

/**
 * The endpoint handlers of one `Auth`, to register on routes of your own (`authRoutes()` registers
 * them on the spec's paths).
 * @example
 * const { login, me } = createHandlers(auth)
 * r.post('/auth/login', login, 'auth.login')
 */
export function createHandlers(auth: Auth): AuthHandlers {
  // Arrows named by their keys, as the methods they replace were: a route record names a handler
  // by its function's name (`login()`), and an anonymous one `closure`.
  return {
    login: (request) => login(auth, request),
    refresh: (request) => refresh(auth, request),
    me: (request) => me(auth, request),
    logout: (request) => logout(auth, request),
    refreshTokenLogin: (request) => refreshTokenLogin(auth, request),
    refreshTokenRefresh: (request) => refreshTokenRefresh(auth, request),
    oauthToken: (request) => oauthToken(auth, request),
    adminUsers: (request) => adminUsers(auth, request),
  }
}

async function credentials(auth: Auth, request: FwRequest): Promise<UserRecord> {
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

async function currentUser(auth: Auth, request: FwRequest): Promise<UserRecord> {
  const id = request.getAttribute('auth.user_id')
  const user = await storeCall(async () =>
    typeof id === 'number' ? (await auth.database()).users.findById(id) : null,
  )
  // The token verified but names no user (deleted since): the token is no good.
  if (user === null) throw unauthorized(MESSAGES.token, { headers: INVALID_TOKEN })
  return user
}

async function login(auth: Auth, request: FwRequest): Promise<FwResponse> {
  const user = await credentials(auth, request)
  return json({ token: await auth.issueFor(user), user: loginUser(user) }, 200, NO_STORE)
}

async function refresh(auth: Auth, request: FwRequest): Promise<FwResponse> {
  assertReadableBody(request)
  const token = text(request, 'token')
  if (token === null) throw badRequest(AUTH_MESSAGES.tokenRequired)
  const eligible = await refreshable(auth, token)
  if (eligible === null) throw badRequest(AUTH_MESSAGES.notEligible)
  // A refresh never lengthens a token's life: a 900 s access token of a refresh-token session
  // (/rt) came back as a 3600 s one, and its chain could be refreshed hourly without the session.
  const tokens = auth.tokenService()
  const lifetime = eligible.lifetime
  const access = await tokens.mint(
    eligible.userId,
    {},
    lifetime === undefined || lifetime >= tokens.ttl ? {} : { ttl: lifetime },
  )
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
}

async function me(auth: Auth, request: FwRequest): Promise<FwResponse> {
  return json(publicUser(await currentUser(auth, request)), 200, {
    'cache-control': 'private, no-store',
  })
}

async function logout(auth: Auth, request: FwRequest): Promise<FwResponse> {
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
  await revocationCall(async () =>
    (await auth.tokenRevocations()).revoke(jti, payload.exp, String(payload.sub)),
  )
  return noContent()
}

async function refreshTokenLogin(auth: Auth, request: FwRequest): Promise<FwResponse> {
  const user = await credentials(auth, request)
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
}

async function refreshTokenRefresh(auth: Auth, request: FwRequest): Promise<FwResponse> {
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
  if (user === null) throw unauthorized(AUTH_MESSAGES.invalidRefreshToken, { headers: CHALLENGE })
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
}

async function adminUsers(auth: Auth, request: FwRequest): Promise<FwResponse> {
  const limit = clampInt(request.query('limit'), 100, 1, 1000)
  const offset = clampInt(request.query('offset'), 0, 0, Number.MAX_SAFE_INTEGER)
  const users = await storeCall(async () => (await auth.database()).users.list({ limit, offset }))
  return json({ users: users.map(({ id, email, name }) => ({ id, email, name })) }, 200, {
    'cache-control': 'private, no-store',
  })
}

/**
 * The user id (and jti) of a token that verifies, is not revoked and has at most REFRESH_WINDOW
 * seconds left; else null. The old token's jti is revoked, so each token refreshes once.
 */
async function refreshable(
  auth: Auth,
  token: string,
): Promise<{ userId: number; jti?: string; lifetime?: number } | null> {
  const tokens = auth.tokenService()
  const payload = await tokens.verify(token)
  if (payload === null || payload.exp - tokens.nowSeconds() > REFRESH_WINDOW) return null
  const userId = parseSubject(payload.sub)
  if (userId === null) return null
  const user = await storeCall(async () => (await auth.database()).users.findById(userId))
  if (user === null) return null
  const issued = payload.iat
  const lifetime =
    typeof issued === 'number' && payload.exp > issued ? payload.exp - issued : undefined
  if (typeof payload.jti === 'string') {
    // Test-and-set: of concurrent refreshes of one token, one wins; a revoked token gets none.
    const jti = payload.jti
    if (
      !(await revocationCall(async () =>
        (await auth.tokenRevocations()).revoke(jti, payload.exp, String(payload.sub)),
      ))
    )
      return null
    return { userId, jti, ...(lifetime === undefined ? {} : { lifetime }) }
  }
  return { userId, ...(lifetime === undefined ? {} : { lifetime }) }
}

function clampInt(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : fallback
  return Math.min(max, Math.max(min, n))
}
