/**
 * The assembled recipe: configuration from the environment, the production secret rules at
 * kernel boot, the routes authRoutes registers, and the handlers on real PostgreSQL and Redis
 * (two Auth instances standing for two processes that share them).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  Auth,
  authOptionsFromEnv,
  createAuth,
  createUser,
  defaultAuth,
  setDefaultAuth,
} from '../../src/auth/auth.js'
import { oauthBody } from '../../src/auth/handlers.js'
import { authRoutes } from '../../src/auth/routes.js'
import { collectRoutes } from '../../src/define/registrar.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { FwError } from '../../src/shared/errors.js'
import {
  build,
  kernelStub,
  post,
  POSTGRES_URL,
  reachable,
  REDIS_URL,
  run,
  SECRET,
  uniquePrefix,
  withAuthorization,
} from './support.js'

const [postgresUp, redisUp] = await Promise.all([reachable(POSTGRES_URL), reachable(REDIS_URL)])

describe('configuration', () => {
  it('reads JWT_SECRET, DATABASE_URL, REDIS_URL and APP_ENV', () => {
    expect(
      authOptionsFromEnv({
        JWT_SECRET: 's',
        DATABASE_URL: 'postgres://x/y',
        REDIS_URL: 'redis://r',
        APP_ENV: 'production',
      }),
    ).toEqual({
      secret: 's',
      database: 'postgres://x/y',
      revocations: 'redis://r',
      production: true,
    })
    expect(authOptionsFromEnv({})).toEqual({ database: 'sqlite:.fw/app.db', production: false })
  })

  it('refuses to build the auth middleware in production without a 32-byte secret', () => {
    for (const secret of [undefined, 'too-short']) {
      const auth = createAuth({
        production: true,
        database: 'sqlite::memory:',
        ...(secret ? { secret } : {}),
      })
      const error = (() => {
        try {
          auth.middleware.auth([], kernelStub)
        } catch (e) {
          return e
        }
      })()
      expect(error).toBeInstanceOf(FwError)
      expect((error as FwError).code).toBe('FW_SERVE_CONFIG')
      expect((error as FwError).hint).toMatch(/openssl rand/)
    }
    expect(() =>
      createAuth({ production: true, secret: SECRET }).middleware.auth([], kernelStub),
    ).not.toThrow()
  })

  it('uses a random secret with a warning outside production', async () => {
    const warnings: unknown[] = []
    const auth = createAuth({ production: false, database: 'sqlite::memory:' })
    const middleware = auth.middleware.auth([], {
      ...kernelStub,
      log: { ...kernelStub.log, warn: (m: unknown) => warnings.push(m) },
    })
    expect(warnings).toEqual([expect.stringMatching(/JWT_SECRET is not set/)])
    const token = await auth.tokenService().issue(1)
    expect((await run([middleware], withAuthorization(`Bearer ${token}`))).status).toBe(200)
    expect(
      await createAuth({ production: false }).tokenService(kernelStub.log).verify(token),
    ).toBeNull()
  })

  it('shares one default Auth per process, replaceable', () => {
    const mine = createAuth({ secret: SECRET })
    setDefaultAuth(mine)
    expect(defaultAuth()).toBe(mine)
    setDefaultAuth(null)
    expect(defaultAuth()).toBeInstanceOf(Auth)
    expect(defaultAuth()).toBe(defaultAuth())
    setDefaultAuth(null)
  })
})

describe('authRoutes', () => {
  it('registers the endpoints with names and middleware, opening nothing', () => {
    const { routes } = collectRoutes((r) =>
      authRoutes(r, () => {
        throw new Error('resolved at registration')
      }),
    )
    expect(routes.map((r) => [r.method, r.path, r.name, r.middleware])).toEqual([
      ['POST', '/auth/login', 'auth.login', ['throttle:5,300']],
      ['POST', '/rt/auth/login', 'rt.auth.login', ['throttle:5,300']],
      // oauthBody answers a body that fails to load as RFC 6749 invalid_request (audit-2.test.ts).
      ['POST', '/oauth/token', 'oauth.token', ['throttle:5,300', oauthBody]],
      ['POST', '/auth/refresh', 'auth.refresh', []],
      ['POST', '/rt/auth/refresh', 'rt.auth.refresh', []],
      ['GET', '/auth/me', 'auth.me', ['auth']],
      ['POST', '/auth/logout', 'auth.logout', ['auth']],
      ['GET', '/admin/users', 'admin.users', ['auth', 'role:admin']],
    ])
    expect(routes.map((r) => (r.handler as () => unknown).name)).toContain('login')
  })

  it('puts the two refresh routes in one group with the refreshMiddleware given', () => {
    const { routes } = collectRoutes((r) =>
      authRoutes(r, createAuth({ secret: SECRET }), { refreshMiddleware: ['throttle:60,60'] }),
    )
    expect(routes.filter((r) => r.path.endsWith('/refresh')).map((r) => r.middleware)).toEqual([
      ['throttle:60,60'],
      ['throttle:60,60'],
    ])
  })

  it('leaves out variations and the throttle when told', () => {
    const { routes } = collectRoutes((r) =>
      authRoutes(r, createAuth({ secret: SECRET }), {
        loginMiddleware: [],
        refreshMiddleware: [],
        refreshTokens: false,
        oauth: false,
        admin: false,
      }),
    )
    expect(routes.map((r) => r.path)).toEqual([
      '/auth/login',
      '/auth/refresh',
      '/auth/me',
      '/auth/logout',
    ])
    expect(routes[0]!.middleware).toEqual([])
    expect(routes[1]!.middleware).toEqual([])
  })
})

/** Two Auth instances (two processes) over one database and one revocation list. */
async function pair(options: ConstructorParameters<typeof Auth>[0]): Promise<[Auth, Auth]> {
  return [createAuth({ secret: SECRET, ...options }), createAuth({ secret: SECRET, ...options })]
}

async function body(
  response: Promise<{ body: unknown; status: number }>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await response
  return { status: r.status, json: JSON.parse(String(r.body)) as Record<string, unknown> }
}

describe.runIf(redisUp)('revocation shared through Redis', () => {
  const auths: Auth[] = []
  afterAll(async () => {
    for (const a of auths) await a.close()
  })

  it('a logout in one process is a 401 in another', async () => {
    const [one, two] = await pair({ database: 'sqlite::memory:', revocations: REDIS_URL })
    auths.push(one, two)
    const token = await one.tokenService().issue(1, {})
    const authTwo = build(two.middleware.auth)
    expect((await run([authTwo], withAuthorization(`Bearer ${token}`))).status).toBe(200)
    const logout = build(one.middleware.auth)
    const out = await run([logout], withAuthorization(`Bearer ${token}`), (request: FwRequest) =>
      one.handlers.logout(request),
    )
    expect(out.status).toBe(204)
    const after = await run([authTwo], withAuthorization(`Bearer ${token}`))
    expect(after).toMatchObject({ status: 401, body: { error: 'Token revoked' } })
  })
})

describe.runIf(postgresUp)('the handlers on PostgreSQL', () => {
  const prefix = uniquePrefix('auth')
  const auths: Auth[] = []
  afterAll(async () => {
    for (const a of auths) await a.close()
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    await client.query(`DROP TABLE IF EXISTS ${prefix}refresh_tokens, ${prefix}users`)
    await client.end()
  })

  it('logs in, and lets one of 10 parallel refreshes across two processes rotate', async () => {
    const [one, two] = await pair({ database: POSTGRES_URL, tablePrefix: prefix })
    auths.push(one, two)
    const email = `pg-${randomBytes(4).toString('hex')}@example.com`
    await createUser(one, { email, name: 'Pg', password: 'correct horse', roles: ['admin'] })
    const login = await body(
      two.handlers.refreshTokenLogin(post('/rt/auth/login', { email, password: 'correct horse' })),
    )
    expect(login.status).toBe(200)
    const refresh = (auth: Auth) =>
      body(
        auth.handlers.refreshTokenRefresh(
          post('/rt/auth/refresh', { refresh_token: login.json.refresh_token }),
        ),
      )
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => refresh(i % 2 ? one : two)),
    )
    const statuses = outcomes.map((o) =>
      o.status === 'fulfilled' ? o.value.status : (o.reason as { status: number }).status,
    )
    expect(statuses.sort()).toEqual([200, ...Array(9).fill(401)])
  })
})
