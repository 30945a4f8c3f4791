/**
 * The token-authentication recipe assembled: token service, revocation list, user and
 * refresh-token stores, the middleware factories and the endpoint handlers. Creating an Auth is
 * cheap and touches nothing: the secret is checked when the kernel builds the middleware (so
 * `fw serve` refuses to start with a weak production secret), the database opens on first use.
 */
import cluster from 'node:cluster'
import { randomBytes } from 'node:crypto'
import { FwError } from '../shared/errors.js'
import type { Logger, MiddlewareFactory } from '../runtime/types.js'
import { ClusterRevocationList, REVOCATION_PRIMARY_ENV } from './cluster-revocation.js'
import { DurableRevocationList } from './durable-revocation.js'
import { createHandlers, type AuthHandlers } from './handlers.js'
import { DEFAULT_TTL, TokenService, type IssuedToken } from './jwt.js'
import { authMiddleware, revocationCall, roleMiddleware } from './middleware.js'
import { checkPassword, hashPassword, needsRehash, verifyDummy } from './password.js'
import { RefreshTokens } from './refresh-tokens.js'
import { connectRedisRevocations, MemoryRevocationList, type RevocationList } from './revocation.js'
import { DEFAULT_DATABASE_URL, openDatabase } from './stores/open.js'
import type { AccessTokenRef, Database, UserRecord } from './stores/types.js'
import { isProduction } from '../shared/app-env.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

export interface AuthOptions {
  /** HS256 secret (JWT_SECRET). Unset: a random one per start outside production, with a warning. */
  secret?: string | Uint8Array | undefined
  /** Token issuer. Default 'framework-app'. */
  issuer?: string | undefined
  /** The tokens' `aud`, required when set. Default none: a token naming any audience is refused. */
  audience?: string | undefined
  /** Lifetime of /auth/login tokens, seconds. Default 3600. */
  ttl?: number | undefined
  /** Production rules (secret required, >= 32 bytes). Default: APP_ENV === 'production'. */
  production?: boolean | undefined
  /** A database, a DATABASE_URL, or a function opening one. Default 'sqlite:.fw/app.db'. */
  database?: Database | string | (() => Promise<Database>) | undefined
  /** Prefix of the table names when `database` is a URL. */
  tablePrefix?: string | undefined
  /**
   * A revocation list, or a Redis URL for a shared one. Default: in memory (in a `--workers`
   * worker, the primary's, over IPC).
   */
  revocations?: RevocationList | string | undefined
  /** The clock, milliseconds (tests move it). */
  now?: (() => number) | undefined
  log?: Logger | undefined
}

const AUTH_OPTIONS = optionNames<AuthOptions>({
  secret: 1,
  issuer: 1,
  audience: 1,
  ttl: 1,
  production: 1,
  database: 1,
  tablePrefix: 1,
  revocations: 1,
  now: 1,
  log: 1,
})

export interface AuthMiddlewareMap {
  auth: MiddlewareFactory
  role: MiddlewareFactory
  [alias: string]: MiddlewareFactory
}

/**
 * @example
 * const auth = createAuth({ secret: process.env.JWT_SECRET, database: process.env.DATABASE_URL })
 * const kernel = await Kernel.boot({ routeCache, register, middleware: auth.middleware })
 */
export class Auth {
  readonly middleware: AuthMiddlewareMap
  readonly handlers: AuthHandlers
  readonly now: () => number
  readonly #options: AuthOptions
  #tokens: TokenService | null = null
  #database: Promise<Database> | null = null
  #revocations: Promise<RevocationList> | null = null
  #durable: Promise<RevocationList> | null = null
  #refresh: Promise<RefreshTokens> | null = null

  constructor(options: AuthOptions = {}) {
    checkOptions('createAuth()', options, AUTH_OPTIONS)
    this.#options = options
    this.now = options.now ?? Date.now
    this.middleware = {
      auth: (params, kernel) =>
        authMiddleware({
          tokens: () => this.tokenService(kernel.log),
          revocations: () => this.tokenRevocations(),
        })(params, kernel),
      role: roleMiddleware(),
    }
    this.handlers = createHandlers(this)
  }

  /** The token service; the first call checks the secret (throws FwError in production). */
  tokenService(log: Logger | undefined = this.#options.log): TokenService {
    this.#tokens ??= new TokenService({
      secret: this.#secret(log),
      issuer: this.#options.issuer,
      ...(this.#options.audience === undefined ? {} : { audience: this.#options.audience }),
      ttl: this.#options.ttl ?? DEFAULT_TTL,
      withJti: true,
      production: this.#production(),
      now: this.now,
    })
    return this.#tokens
  }

  /** The user and refresh-token stores, opened (and migrated) on first use. */
  database(): Promise<Database> {
    const source = this.#options.database ?? DEFAULT_DATABASE_URL
    this.#database ??= retryable(
      typeof source === 'string'
        ? openDatabase(source, { tablePrefix: this.#options.tablePrefix })
        : typeof source === 'function'
          ? source()
          : Promise.resolve(source),
      () => (this.#database = null),
    )
    return this.#database
  }

  revocations(): Promise<RevocationList> {
    const source = this.#options.revocations
    this.#revocations ??= retryable<RevocationList>(
      typeof source === 'string'
        ? connectRedisRevocations(source)
        : Promise.resolve(source ?? this.#memoryRevocations()),
      () => (this.#revocations = null),
    )
    return this.#revocations
  }

  /**
   * The list the middleware and the endpoints use: `revocations()`, and when that is the default
   * in-process one (no REDIS_URL, no list given), written through to the user database so that
   * logouts and refreshes outlive a restart.
   */
  tokenRevocations(): Promise<RevocationList> {
    if (this.#options.revocations !== undefined) return this.revocations()
    this.#durable ??= retryable(
      this.revocations().then(
        (inner) =>
          new DurableRevocationList({
            inner,
            store: async () => (await this.database()).revokedTokens,
            now: this.now,
          }),
      ),
      () => (this.#durable = null),
    )
    return this.#durable
  }

  /**
   * The refresh tokens; a theft also puts the family's live access tokens on `tokenRevocations()`,
   * or the thief's would keep working until it expires (up to 900 s). A failure there is a 503.
   */
  refreshTokens(): Promise<RefreshTokens> {
    this.#refresh ??= retryable(
      this.database().then(
        (db) =>
          new RefreshTokens(db.refreshTokens, {
            now: this.now,
            revokeAccessTokens: (tokens, userId) => this.#revokeAccessTokens(tokens, userId),
          }),
      ),
      () => (this.#refresh = null),
    )
    return this.#refresh
  }

  /**
   * The user whose email and password match, or null. Unknown emails cost a verification too,
   * so timing does not tell which emails exist. An outdated hash (bcrypt, weaker argon2, or one
   * of the unnormalised password) is replaced by a fresh argon2id one.
   */
  async checkCredentials(email: string, password: string): Promise<UserRecord | null> {
    const { users } = await this.database()
    const user = await users.findByEmail(email)
    if (user === null) return verifyDummy(password).then(() => null)
    const check = await checkPassword(password, user.password_hash)
    if (check === 'mismatch') return null
    if (check === 'legacy' || needsRehash(user.password_hash)) {
      await hashPassword(password)
        .then((hash) => users.updatePasswordHash(user.id, hash))
        .catch((error: unknown) =>
          this.#options.log?.warn({ err: error }, 'Could not upgrade a password hash'),
        )
    }
    return user
  }

  /** An access token for `user` with the login claims: email, name, roles (when any), jti. */
  async issueFor(user: UserRecord, ttl?: number): Promise<string> {
    return (await this.mintFor(user, ttl)).token
  }

  /** As `issueFor`, with the token's jti and exp (recorded with a refresh token). */
  mintFor(user: UserRecord, ttl?: number): Promise<IssuedToken> {
    const claims: Record<string, unknown> = { email: user.email, name: user.name }
    if (user.roles.length > 0) claims.roles = [...user.roles]
    return this.tokenService().mint(user.id, claims, ttl === undefined ? {} : { ttl })
  }

  /** Closes the database and the Redis connection, when they were opened. */
  async close(): Promise<void> {
    const [db, revocations] = await Promise.all([
      this.#database?.catch(() => null),
      this.#revocations?.catch(() => null),
    ])
    await db?.close()
    await revocations?.close?.()
    this.#database = this.#revocations = this.#refresh = this.#durable = null
  }

  /**
   * This process's memory, or the primary's when it holds the list for all workers: a list per
   * worker would let a logged-out token through on the others, and refresh a token once on each.
   */
  #memoryRevocations(): RevocationList {
    if (cluster.isWorker && process.env[REVOCATION_PRIMARY_ENV] === '1')
      return new ClusterRevocationList()
    return new MemoryRevocationList({ now: this.now })
  }

  /**
   * Under the user's name, as logout and refresh revoke: a family rotated without end (the
   * refresh endpoint is not throttled) otherwise filled the whole bounded list, and every user's
   * logout and refresh answered 503. Newest first: when the user's share cannot hold them all,
   * the ones left live are those that expire soonest, not the last a thief minted.
   */
  #revokeAccessTokens(tokens: AccessTokenRef[], userId: number): Promise<void> {
    // Access tokens of a session share one lifetime: the later one expires, the newer it is.
    // Within one second, the stores' order (SQLite by rowid, PostgreSQL as stored) reversed.
    const newestFirst = [...tokens].reverse().sort((a, b) => b.expiresAt - a.expiresAt)
    return revocationCall(async () => {
      const revocations = await this.tokenRevocations()
      for (const { jti, expiresAt } of newestFirst)
        await revocations.revoke(jti, expiresAt, String(userId))
    })
  }

  #production(): boolean {
    return this.#options.production ?? isProduction()
  }

  #secret(log: Logger | undefined): string | Uint8Array {
    const secret = this.#options.secret
    if (secret !== undefined && secret.length > 0) return secret
    // createAuth() reads no variable: with JWT_SECRET set, "JWT_SECRET is not set" sent the
    // reader looking for a typo in an environment that was right.
    const inEnv = Boolean(process.env.JWT_SECRET)
    const missing = inEnv
      ? 'createAuth() was given no secret (it does not read JWT_SECRET)'
      : 'JWT_SECRET is not set'
    if (this.#production()) {
      throw new FwError('FW_SERVE_CONFIG', missing, {
        hint: inEnv
          ? 'Pass createAuth({ ...authOptionsFromEnv(), ... }), or a secret of your own.'
          : 'Set JWT_SECRET to 32 or more random bytes, e.g. `openssl rand -hex 32`.',
      })
    }
    const warning = `${missing}: using a random secret, so tokens stop verifying after a restart`
    if (log) log.warn(warning)
    else process.emitWarning(warning)
    return randomBytes(32).toString('hex')
  }
}

/** A failed open is forgotten, so the next request tries again (the database may come back). */
function retryable<T>(promise: Promise<T>, forget: () => void): Promise<T> {
  return promise.catch((error: unknown) => {
    forget()
    throw error
  })
}

/**
 * @example
 * const auth = createAuth(authOptionsFromEnv())
 */
export function createAuth(options: AuthOptions = {}): Auth {
  return new Auth(options)
}

/** Options from JWT_SECRET, DATABASE_URL, REDIS_URL and APP_ENV. */
export function authOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AuthOptions {
  return {
    ...(env.JWT_SECRET ? { secret: env.JWT_SECRET } : {}),
    database: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    ...(env.REDIS_URL ? { revocations: env.REDIS_URL } : {}),
    production: isProduction(env.APP_ENV),
  }
}

// On globalThis, not in a module variable: the routes file may load another copy of this module
// (src vs dist) than `fw serve` does, and both must share one secret and one revocation list.
const SHARED = Symbol.for('fw.auth.default')
const registry = globalThis as { [SHARED]?: Auth | null }

/**
 * The process-wide Auth from the environment, shared by the routes file and `fw serve`.
 * @example
 * Kernel.boot({ ..., middleware: { ...defaultAuth().middleware } })
 */
export function defaultAuth(): Auth {
  registry[SHARED] ??= createAuth(authOptionsFromEnv())
  return registry[SHARED]
}

/** Replaces the process-wide Auth (tests, apps configuring it in code). */
export function setDefaultAuth(auth: Auth | null): void {
  registry[SHARED] = auth
}

/** Closes the process-wide Auth's connections (database, Redis) at shutdown, if it was made. */
export async function closeDefaultAuth(): Promise<void> {
  const current = registry[SHARED]
  registry[SHARED] = null
  await current?.close()
}

const NEW_USER_FIELDS = optionNames<Parameters<typeof createUser>[1]>({
  email: 1,
  name: 1,
  password: 1,
  roles: 1,
})

/**
 * Creates a user with a freshly hashed password.
 * @example
 * await createUser(auth, { email: 'ada@example.com', name: 'Ada', password, roles: ['admin'] })
 */
export async function createUser(
  auth: Auth,
  user: { email: string; name: string; password: string; roles?: readonly string[] },
): Promise<UserRecord> {
  // `role: ['admin']` made a user without the role, and said nothing.
  checkOptions('createUser()', user, NEW_USER_FIELDS)
  const { users } = await auth.database()
  return users.create({
    email: user.email,
    name: user.name,
    passwordHash: await hashPassword(user.password),
    roles: user.roles ?? [],
  })
}
