/**
 * HS256 access tokens (spec "Access token"). jose does the signing and the signature check; the
 * rules jose leaves open are enforced here: HS256 only, exp and sub required (DESIGN.md), iss
 * and iat checked when present (ours always carry them), exp strict, iat/nbf at most 30 s in the
 * future, a positive integer sub, an `aud` only when it names our audience, canonical compact form
 * of at most 8 KiB, and claims copied into null-prototype objects.
 */
import { randomBytes } from 'node:crypto'
import { jwtVerify, SignJWT, type JWTPayload } from 'jose'
import { FwError } from '../shared/errors.js'
import {
  hasCanonicalShape,
  parseSubject,
  readHeader,
  toNullPrototype,
} from './internal/token-shape.js'
import { isProduction } from '../shared/app-env.js'
import { checkOptions, optionNames } from '../shared/option-names.js'

/** Claims of a verified token. Objects in it have a null prototype. */
export interface AccessTokenPayload {
  [claim: string]: unknown
  iss: string
  iat: number
  exp: number
  sub: number | string
  jti?: string
}

export interface TokenServiceOptions {
  /** The HS256 secret (JWT_SECRET). At least 32 bytes when `production` is true. */
  secret: string | Uint8Array
  /** The `iss` claim written, and required to match when a token has one. Default 'framework-app'. */
  issuer?: string | undefined
  /** Lifetime in seconds. Default 3600. */
  ttl?: number | undefined
  /**
   * The `aud` claim written, and required. Unset (the default): tokens carry no `aud`, and one that
   * names an audience is refused: it was meant for another service sharing the secret (RFC 7519
   * section 4.1.3: a recipient that is not in `aud` must reject the token).
   */
  audience?: string | undefined
  /** Add a random `jti` (16 bytes hex) to every token, for revocation. Default false. */
  withJti?: boolean | undefined
  /** Refuse secrets under 32 bytes. Default: APP_ENV === 'production'. */
  production?: boolean | undefined
  /** The clock, in milliseconds (tests move it). */
  now?: (() => number) | undefined
}

/** A token issued, with what revoking it later takes: its `jti` (when the service adds one) and `exp`. */
export interface IssuedToken {
  token: string
  exp: number
  jti?: string
}

export interface IssueOptions {
  /** Lifetime of this token in seconds, instead of the service's ttl. */
  ttl?: number | undefined
}

export const DEFAULT_ISSUER = 'framework-app'
export const DEFAULT_TTL = 3600
export const MIN_SECRET_BYTES = 32
/** How far in the future iat/nbf may be (clock skew between hosts). exp gets no leeway. */
export const CLOCK_TOLERANCE = 30

const RESERVED = ['iss', 'iat', 'exp', 'sub', 'jti', 'aud'] as const

const TOKEN_SERVICE_OPTIONS = optionNames<TokenServiceOptions>({
  secret: 1,
  issuer: 1,
  ttl: 1,
  audience: 1,
  withJti: 1,
  production: 1,
  now: 1,
})
const ISSUE_OPTIONS = optionNames<IssueOptions>({ ttl: 1 })

/**
 * Issues and verifies access tokens.
 * @example
 * const tokens = new TokenService({ secret: process.env.JWT_SECRET!, withJti: true })
 * const token = await tokens.issue(42, { email: 'ada@example.com' })
 * const payload = await tokens.verify(token) // null when anything is wrong
 */
export class TokenService {
  readonly issuer: string
  readonly audience: string | undefined
  readonly ttl: number
  readonly withJti: boolean
  readonly #key: Uint8Array
  readonly #now: () => number

  constructor(options: TokenServiceOptions) {
    checkOptions('new TokenService()', options, TOKEN_SERVICE_OPTIONS)
    this.#key = checkSecret(options.secret, options.production ?? isProduction())
    this.issuer = options.issuer ?? DEFAULT_ISSUER
    this.audience = options.audience
    this.ttl = checkTtl(options.ttl ?? DEFAULT_TTL)
    this.withJti = options.withJti ?? false
    this.#now = options.now ?? Date.now
  }

  /** The current time in whole Unix seconds. */
  nowSeconds(): number {
    return Math.floor(this.#now() / 1000)
  }

  /** Signs a token for user `sub`; extra claims are merged, the registered ones win. */
  async issue(
    sub: number,
    extraClaims: Record<string, unknown> = {},
    options: IssueOptions = {},
  ): Promise<string> {
    checkOptions('TokenService.issue()', options, ISSUE_OPTIONS)
    return (await this.#mint(sub, extraClaims, options)).token
  }

  /**
   * As `issue`, with the token's `jti` and `exp`: what a caller records to revoke it later.
   * @example
   * const { token, jti, exp } = await tokens.mint(42, {}, { ttl: 900 })
   */
  async mint(
    sub: number,
    extraClaims: Record<string, unknown> = {},
    options: IssueOptions = {},
  ): Promise<IssuedToken> {
    // Per call, at login: a walk over one key, next to an HMAC (a `tll: 60` minted an hour).
    checkOptions('TokenService.mint()', options, ISSUE_OPTIONS)
    return this.#mint(sub, extraClaims, options)
  }

  async #mint(
    sub: number,
    extraClaims: Record<string, unknown>,
    options: IssueOptions,
  ): Promise<IssuedToken> {
    if (parseSubject(sub) === null)
      throw new TypeError(`sub must be a positive safe integer, got ${String(sub)}`)
    const iat = this.nowSeconds()
    const claims: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(extraClaims)) {
      if (!(RESERVED as readonly string[]).includes(name)) claims[name] = value
    }
    const exp = iat + checkTtl(options.ttl ?? this.ttl)
    const jti = this.withJti ? randomBytes(16).toString('hex') : undefined
    const registered = {
      iss: this.issuer,
      iat,
      exp,
      sub,
      ...(this.audience === undefined ? {} : { aud: this.audience }),
      ...(jti === undefined ? {} : { jti }),
    }
    // The spec's sub is an integer; jose types it as a string, but signs whatever JSON it is given.
    const payload = { ...claims, ...registered } as unknown as JWTPayload
    const token = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(this.#key)
    return jti === undefined ? { token, exp } : { token, exp, jti }
  }

  /**
   * The payload of a valid token, or null. Never throws, whatever the input.
   * @example
   * const payload = await tokens.verify(request.getHeaderLine('authorization').slice(7))
   */
  async verify(token: unknown): Promise<AccessTokenPayload | null> {
    try {
      if (typeof token !== 'string' || !hasCanonicalShape(token)) return null
      const header = readHeader(token)
      if (header === null || header.alg !== 'HS256' || 'crit' in header || 'b64' in header)
        return null
      const now = this.nowSeconds()
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        // DESIGN.md requires exp and sub; iss and iat (always issued) are checked when present.
        requiredClaims: ['exp', 'sub'],
        ...(this.audience === undefined ? {} : { audience: this.audience }),
        clockTolerance: CLOCK_TOLERANCE,
        currentDate: new Date(now * 1000),
      })
      if (this.audience === undefined && payload.aud !== undefined) return null
      return checkClaims(payload, now, this.issuer)
        ? (toNullPrototype(payload) as AccessTokenPayload)
        : null
    } catch {
      return null
    }
  }
}

/**
 * What jose leaves to us: our issuer when iss is given, integer times (nbf too), strict exp, iat (when
 * given) before exp and not in the future, sub and jti shape.
 */
function checkClaims(payload: Record<string, unknown>, now: number, issuer: string): boolean {
  const { iss, iat, exp, jti, nbf } = payload
  if (iss !== undefined && iss !== issuer) return false
  if (!Number.isSafeInteger(exp) || (exp as number) <= now) return false
  // jose checked nbf against the clock; its shape is ours, as for the other times.
  if (nbf !== undefined && !Number.isSafeInteger(nbf)) return false
  if (iat !== undefined) {
    if (!Number.isSafeInteger(iat) || (exp as number) <= (iat as number)) return false
    if ((iat as number) > now + CLOCK_TOLERANCE) return false
  }
  if (jti !== undefined && (typeof jti !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(jti)))
    return false
  return parseSubject(payload.sub) !== null
}

function checkSecret(secret: string | Uint8Array, production: boolean): Uint8Array {
  const key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret
  if (key.byteLength === 0) {
    throw new FwError('FW_SERVE_CONFIG', 'The JWT secret is empty', {
      hint: 'Set JWT_SECRET to 32 or more random bytes, e.g. `openssl rand -hex 32`.',
    })
  }
  if (production && key.byteLength < MIN_SECRET_BYTES) {
    throw new FwError(
      'FW_SERVE_CONFIG',
      `JWT_SECRET is ${key.byteLength} bytes; production needs at least ${MIN_SECRET_BYTES}`,
      {
        hint: 'Generate one with `openssl rand -hex 32` and set JWT_SECRET.',
      },
    )
  }
  return key
}

function checkTtl(ttl: number): number {
  if (!Number.isSafeInteger(ttl) || ttl <= 0)
    throw new TypeError(`ttl must be a positive integer of seconds, got ${ttl}`)
  return ttl
}
