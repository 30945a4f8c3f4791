/**
 * fw's token-authentication recipe: HS256 access tokens, the 'auth' and 'role' middleware, a
 * revocation list, user and refresh-token stores (SQLite, PostgreSQL), password hashing, and the
 * login/refresh/me/logout, refresh-token, OAuth-style and admin endpoints.
 *
 * @example
 * const auth = createAuth(authOptionsFromEnv())
 * const kernel = await Kernel.boot({ routeCache, register: (r) => authRoutes(r, auth), middleware: auth.middleware })
 */
export {
  Auth,
  createAuth,
  authOptionsFromEnv,
  closeDefaultAuth,
  defaultAuth,
  setDefaultAuth,
  createUser,
} from './auth.js'
export type { AuthOptions, AuthMiddlewareMap } from './auth.js'
export { authRoutes, type AuthRoutesOptions } from './routes.js'
export {
  createHandlers,
  oauthBody,
  AUTH_MESSAGES,
  NO_STORE,
  SHORT_TTL,
  OAUTH_TTL,
  REFRESH_WINDOW,
  type AuthHandlers,
} from './handlers.js'
export {
  TokenService,
  DEFAULT_ISSUER,
  DEFAULT_TTL,
  MIN_SECRET_BYTES,
  CLOCK_TOLERANCE,
} from './jwt.js'
export type { AccessTokenPayload, TokenServiceOptions, IssueOptions, IssuedToken } from './jwt.js'
export { MAX_TOKEN_LENGTH } from './internal/token-shape.js'
export {
  authMiddleware,
  roleMiddleware,
  bearerToken,
  BEARER_PREFIX,
  MESSAGES,
  type AuthMiddlewareOptions,
} from './middleware.js'
export {
  MemoryRevocationList,
  RedisRevocationList,
  RevocationListFullError,
  connectRedisRevocations,
  type RevocationList,
  type MemoryRevocationOptions,
  type RedisRevocationOptions,
} from './revocation.js'
export {
  ClusterRevocationList,
  setupRevocationPrimary,
  REVOCATION_PRIMARY_ENV,
  type ClusterRevocationOptions,
} from './cluster-revocation.js'
export {
  hashPassword,
  verifyPassword,
  checkPassword,
  normalizePassword,
  type PasswordCheck,
  verifyDummy,
  needsRehash,
  checkNewPassword,
  MAX_PASSWORD_BYTES,
  COST_CAPS,
  type HashAlgorithm,
} from './password.js'
export {
  RefreshTokens,
  hashRefreshToken,
  REFRESH_TOKEN_TTL,
  type RefreshOutcome,
  type RefreshTokensOptions,
  type IssuedAccess,
} from './refresh-tokens.js'
export { openDatabase, DEFAULT_DATABASE_URL, type OpenDatabaseOptions } from './stores/open.js'
export { DuplicateEmailError, normalizeEmail, formatDateTime, publicUser } from './stores/types.js'
export type {
  Database,
  UserStore,
  UserRecord,
  PublicUser,
  NewUser,
  RefreshTokenStore,
  RefreshTokenRecord,
  NewRefreshToken,
  NextRefreshToken,
  AccessTokenRef,
  RotateResult,
} from './stores/types.js'
