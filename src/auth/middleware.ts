/**
 * The 'auth' and 'role:...' middleware aliases (spec "Authentication" 2, 5, 6).
 *
 * auth: exactly one Authorization header of the form `Bearer <token>` (the prefix is
 * case-sensitive), a token that verifies, a jti not on the revocation list; then it sets
 * `auth.user_id`, `auth.payload` and `auth.roles`. Every 401 carries `WWW-Authenticate: Bearer`,
 * with `error="invalid_token"` once a token was sent. role: 403 unless `auth.roles` shares a role
 * with the alias's list (with `WWW-Authenticate: Bearer error="insufficient_scope"`); put it after
 * 'auth'.
 */
import { forbidden, serviceUnavailable, unauthorized } from '../runtime/http-error.js'
import type { Middleware, MiddlewareFactory } from '../runtime/types.js'
import type { TokenService } from './jwt.js'
import { parseSubject, readRoles } from './internal/token-shape.js'
import type { RevocationList } from './revocation.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

export const BEARER_PREFIX = 'Bearer '

export const MESSAGES = {
  header: 'Missing or invalid Authorization header; expected "Bearer <token>"',
  token: 'Invalid or expired token',
  revoked: 'Token revoked',
  forbidden: 'Forbidden',
} as const

const CHALLENGE = { 'www-authenticate': 'Bearer' }
const INVALID_TOKEN = { 'www-authenticate': 'Bearer error="invalid_token"' }
// RFC 6750 section 3: a token that does not enable access MUST get a challenge; 3.1 names the
// error of a token without the privileges (here, roles) the resource needs.
const INSUFFICIENT_SCOPE = { 'www-authenticate': 'Bearer error="insufficient_scope"' }

export interface AuthMiddlewareOptions {
  tokens: TokenService | (() => TokenService)
  revocations?: RevocationList | (() => RevocationList | Promise<RevocationList>) | null | undefined
}

const AUTH_MIDDLEWARE_OPTIONS = optionNames<AuthMiddlewareOptions>({ tokens: 1, revocations: 1 })

/**
 * The 'auth' alias factory.
 * @example
 * Kernel.boot({ ..., middleware: { auth: authMiddleware({ tokens, revocations }) } })
 */
export function authMiddleware(options: AuthMiddlewareOptions): MiddlewareFactory {
  // `revocation: list` left every logged-out token working.
  checkOptions('authMiddleware()', options, AUTH_MIDDLEWARE_OPTIONS)
  return (params) => {
    if (params.length > 0)
      throw new TypeError(`The auth middleware takes no parameters, got "auth:${params.join(',')}"`)
    const tokens = typeof options.tokens === 'function' ? options.tokens() : options.tokens
    const revocations = options.revocations ?? null
    return authenticate(tokens, typeof revocations === 'function' ? revocations : () => revocations)
  }
}

function authenticate(
  tokens: TokenService,
  revocations: () => RevocationList | null | Promise<RevocationList | null>,
): Middleware {
  return async (request, next) => {
    const token = bearerToken(request.getHeader('authorization'))
    if (token === null) throw unauthorized(MESSAGES.header, { headers: CHALLENGE })
    const payload = await tokens.verify(token)
    const userId = payload === null ? null : parseSubject(payload.sub)
    if (payload === null || userId === null)
      throw unauthorized(MESSAGES.token, { headers: INVALID_TOKEN })
    if (typeof payload.jti === 'string' && (await isRevoked(await revocations(), payload.jti))) {
      throw unauthorized(MESSAGES.revoked, { headers: INVALID_TOKEN })
    }
    const authed = request
      .withAttribute('auth.user_id', userId)
      .withAttribute('auth.payload', payload)
      .withAttribute('auth.roles', readRoles(payload))
    return next(authed)
  }
}

/** The token of the one `Bearer <token>` header, or null (missing, repeated, other scheme, empty). */
export function bearerToken(values: readonly string[]): string | null {
  if (values.length !== 1) return null
  const value = values[0]!
  if (!value.startsWith(BEARER_PREFIX)) return null
  const token = value.slice(BEARER_PREFIX.length)
  return token === '' ? null : token
}

async function isRevoked(list: RevocationList | null, jti: string): Promise<boolean> {
  if (list === null) return false
  return revocationCall(() => list.isRevoked(jti))
}

/**
 * A call to the revocation list; any failure (the store is down, the memory list is full) is a
 * 503: fail closed, but say what is wrong, the store and not the client's token.
 * @example
 * await revocationCall(async () => (await auth.revocations()).revoke(jti, exp))
 */
export async function revocationCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw serviceUnavailable('The revocation list is unavailable', { cause: error })
  }
}

/**
 * The 'role' alias factory: `role:admin,editor` lets through tokens with either role.
 * @example
 * r.get('/admin/users', listUsers).withMiddleware(['auth', 'role:admin'])
 */
export function roleMiddleware(): MiddlewareFactory {
  return (params) => {
    const required = params.map((role) => role.trim()).filter((role) => role !== '')
    if (required.length === 0)
      throw new TypeError('The role middleware needs at least one role: role:admin')
    return (request, next) => {
      const roles = request.getAttribute('auth.roles')
      const granted =
        Array.isArray(roles) &&
        roles.some((role) => typeof role === 'string' && required.includes(role))
      if (!granted) throw forbidden(MESSAGES.forbidden, { headers: INSUFFICIENT_SCOPE })
      return next(request)
    }
  }
}
