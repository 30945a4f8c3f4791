/**
 * Registers the recipe's endpoints in a routes file. The handlers look the Auth up when a request
 * arrives, so registering (which the compiler does at build time) opens no database.
 */
import type { MiddlewareInput } from '../define/options.js'
import type { Registrar } from '../define/registrar.js'
import type { FwRequest } from '../runtime/request/request.js'
import type { FwResponse } from '../runtime/response.js'
import { defaultAuth, type Auth } from './auth.js'
import { oauthBody, type AuthHandlers } from './handlers.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

export interface AuthRoutesOptions {
  /**
   * Middleware of the three login routes, applied as one group: a throttle there is one counter
   * for all three. Default ['throttle:5,300'] (spec "Authentication" 7).
   */
  loginMiddleware?: readonly MiddlewareInput[] | undefined
  /**
   * Middleware of the two refresh routes (/auth/refresh, /rt/auth/refresh), one group, so one
   * counter. Default none (DESIGN.md throttles the logins only); ['throttle:60,60'] is a good
   * choice: a client refreshes every few minutes, and each refresh mints a token that a logout
   * or a theft later puts on the revocation list.
   */
  refreshMiddleware?: readonly MiddlewareInput[] | undefined
  /** Leave out variations. Default: all on, as in the example app. */
  refreshTokens?: boolean | undefined
  oauth?: boolean | undefined
  admin?: boolean | undefined
}

const AUTH_ROUTES_OPTIONS = optionNames<AuthRoutesOptions>({
  loginMiddleware: 1,
  refreshMiddleware: 1,
  refreshTokens: 1,
  oauth: 1,
  admin: 1,
})

/**
 * Registers POST /auth/login, /auth/refresh, /auth/logout, GET /auth/me, POST /rt/auth/login,
 * /rt/auth/refresh, /oauth/token and GET /admin/users (names auth.login, ..., admin.users).
 * @example
 * export default defineRoutes((r) => {
 *   authRoutes(r)                       // the process-wide Auth from JWT_SECRET, DATABASE_URL, ...
 *   authRoutes(r, () => myAuth, { loginMiddleware: [] })
 * })
 */
export function authRoutes(
  r: Registrar,
  auth: Auth | (() => Auth) = defaultAuth,
  options: AuthRoutesOptions = {},
): void {
  // `admn: false` registered GET /admin/users all the same.
  checkOptions('authRoutes()', options, AUTH_ROUTES_OPTIONS)
  const current = typeof auth === 'function' ? auth : () => auth
  const handle = (name: keyof AuthHandlers): ((request: FwRequest) => Promise<FwResponse>) => {
    const handler = (request: FwRequest): Promise<FwResponse> => current().handlers[name](request)
    return Object.defineProperty(handler, 'name', { value: name })
  }
  // The logins share one group, so one counter: 5 password guesses per client every 300 s in
  // all, not 5 per login route (15 with the three of them).
  r.group({ middleware: options.loginMiddleware ?? ['throttle:5,300'] }, (r) => {
    r.post('/auth/login', handle('login'), 'auth.login')
    if (options.refreshTokens !== false)
      r.post('/rt/auth/login', handle('refreshTokenLogin'), 'rt.auth.login')
    if (options.oauth !== false)
      r.post('/oauth/token', handle('oauthToken'), { name: 'oauth.token', middleware: [oauthBody] })
  })
  // Unthrottled, one client mints tokens as fast as it can send requests (~500 a second), each
  // one more entry for the revocation list when its session ends; each user's share of the
  // in-memory list (revocation.ts) keeps that to the user's own.
  r.group({ middleware: options.refreshMiddleware ?? [] }, (r) => {
    r.post('/auth/refresh', handle('refresh'), 'auth.refresh')
    if (options.refreshTokens !== false)
      r.post('/rt/auth/refresh', handle('refreshTokenRefresh'), 'rt.auth.refresh')
  })
  r.get('/auth/me', handle('me'), { name: 'auth.me', middleware: ['auth'] })
  r.post('/auth/logout', handle('logout'), { name: 'auth.logout', middleware: ['auth'] })
  if (options.admin !== false)
    r.get('/admin/users', handle('adminUsers'), {
      name: 'admin.users',
      middleware: ['auth', 'role:admin'],
    })
}
