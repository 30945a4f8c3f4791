/**
 * The auth pieces an app can make itself, past createAuth, took a misspelt option from plain
 * JavaScript without a word: `new TokenService({ secret, ttL: 900 })` minted hour-long tokens,
 * `authMiddleware({ tokens, revocation: list })` let every logged-out token through,
 * `openDatabase(url, { tablePrefx: 'app_' })` wrote to another app's tables,
 * `createUser(auth, { ..., role: ['admin'] })` made a user without the role. Each refuses a name it
 * does not know where it is given, naming the closest valid one, and still takes its own.
 */
import { afterAll, describe, expect, it } from 'vitest'
import {
  authMiddleware,
  authRoutes,
  ClusterRevocationList,
  connectRedisRevocations,
  createAuth,
  createUser,
  hashPassword,
  MemoryRevocationList,
  openDatabase,
  RedisRevocationList,
  RefreshTokens,
  setupRevocationPrimary,
  TokenService,
} from '../../src/auth/index.js'
import { collectRoutes } from '../../src/define/registrar.js'
import { pgTables, POSTGRES_URL, reachable, REDIS_URL, SECRET } from './support.js'

// Options as plain JavaScript passes them: no type to catch the typo.
const untyped = <T>(options: Record<string, unknown>): T => options as T
const refused = (message: string): TypeError => new TypeError(message)

const postgresUp = await reachable(POSTGRES_URL)
const redisUp = await reachable(REDIS_URL)
const tables = pgTables('misspelt')
afterAll(() => tables.drop())

describe('TokenService', () => {
  it('refuses a misspelt constructor option, and one of issue() and mint()', async () => {
    expect(() => new TokenService(untyped({ secret: SECRET, ttL: 900 }))).toThrow(
      refused('new TokenService(): unknown option `ttL` — did you mean `ttl`?'),
    )
    const tokens = new TokenService({ secret: SECRET })
    await expect(tokens.issue(1, {}, untyped({ tll: 60 }))).rejects.toThrow(
      refused('TokenService.issue(): unknown option `tll` — did you mean `ttl`?'),
    )
    await expect(tokens.mint(1, {}, untyped({ tll: 60 }))).rejects.toThrow(
      refused('TokenService.mint(): unknown option `tll` — did you mean `ttl`?'),
    )
  })

  it('still takes every option, and a ttl per token', async () => {
    const tokens = new TokenService({
      secret: SECRET,
      issuer: 'app',
      ttl: 900,
      audience: undefined,
      withJti: true,
      production: true,
      now: () => 1_000_000_000_000,
    })
    const { exp, jti } = await tokens.mint(7, {}, { ttl: 60 })
    expect([exp, typeof jti]).toEqual([1_000_000_060, 'string'])
    expect((await tokens.verify(await tokens.issue(7, {}, { ttl: 120 })))?.exp).toBe(1_000_000_120)
  })
})

describe('authMiddleware and authRoutes', () => {
  const tokens = new TokenService({ secret: SECRET })

  it('refuse a misspelt option where they are given', () => {
    const revocations = new MemoryRevocationList()
    expect(() => authMiddleware(untyped({ tokens, revocation: revocations }))).toThrow(
      refused('authMiddleware(): unknown option `revocation` — did you mean `revocations`?'),
    )
    const auth = createAuth({ secret: SECRET })
    expect(() => collectRoutes((r) => authRoutes(r, auth, untyped({ admn: false })))).toThrow(
      refused('authRoutes(): unknown option `admn` — did you mean `admin`?'),
    )
  })

  it('still take their options', () => {
    expect(typeof authMiddleware({ tokens, revocations: null })).toBe('function')
    const auth = createAuth({ secret: SECRET })
    const registrar = collectRoutes((r) =>
      authRoutes(r, auth, {
        loginMiddleware: [],
        refreshMiddleware: undefined,
        refreshTokens: false,
        oauth: false,
        admin: false,
      }),
    )
    expect(registrar.routes.map((route) => route.name)).toEqual([
      'auth.login',
      'auth.refresh',
      'auth.me',
      'auth.logout',
    ])
  })
})

describe('the revocation lists', () => {
  it('refuse misspelt options', async () => {
    expect(() => new MemoryRevocationList(untyped({ maxEntrys: 10 }))).toThrow(
      refused(
        'new MemoryRevocationList(): unknown option `maxEntrys` — did you mean `maxEntries`?',
      ),
    )
    expect(() => new ClusterRevocationList(untyped({ timeout: 100 }))).toThrow(
      refused('new ClusterRevocationList(): unknown option `timeout` — did you mean `timeoutMs`?'),
    )
    expect(() => setupRevocationPrimary(untyped({ maxPerSubjet: 5 }))).toThrow(
      refused(
        'setupRevocationPrimary(): unknown option `maxPerSubjet` — did you mean `maxPerSubject`?',
      ),
    )
    // Refused before any connection is made.
    await expect(
      connectRedisRevocations('redis://127.0.0.1:1', untyped({ prefx: 'app:' })),
    ).rejects.toThrow(
      refused('connectRedisRevocations(): unknown option `prefx` — did you mean `prefix`?'),
    )
    const { Redis } = await import('ioredis')
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true })
    expect(() => new RedisRevocationList(redis, untyped({ commandTimeout: 100 }))).toThrow(
      refused(
        'new RedisRevocationList(): unknown option `commandTimeout` — did you mean `commandTimeoutMs`?',
      ),
    )
    redis.disconnect()
  })

  it('still take theirs: the memory list its bounds, the primary its list or bounds', async () => {
    const list = new MemoryRevocationList({
      maxEntries: 1,
      maxPerSubject: undefined,
      now: undefined,
    })
    await list.revoke('a', Date.now() / 1000 + 60)
    await expect(list.revoke('b', Date.now() / 1000 + 60)).rejects.toThrow(/holds 1 unexpired/)
    setupRevocationPrimary({ list, maxEntries: undefined })()
    setupRevocationPrimary({ list: undefined, maxEntries: 10, maxPerSubject: 2 })()
    expect(new ClusterRevocationList({ timeoutMs: 50 })).toBeInstanceOf(ClusterRevocationList)
  })

  it.runIf(redisUp)('connectRedisRevocations still takes its options (real Redis)', async () => {
    const prefix = `fw:test:misspelt:${process.pid}:`
    const list = await connectRedisRevocations(REDIS_URL, { prefix, commandTimeoutMs: 2000 })
    try {
      expect(await list.revoke('jti1', Math.floor(Date.now() / 1000) + 60)).toBe(true)
      expect(await list.isRevoked('jti1')).toBe(true)
    } finally {
      await list.close()
    }
  })
})

describe('RefreshTokens', () => {
  it('refuses a misspelt option, and takes its own', async () => {
    const db = await openDatabase('sqlite::memory:')
    try {
      expect(
        () => new RefreshTokens(db.refreshTokens, untyped({ revokeAccessToken: async () => {} })),
      ).toThrow(
        refused(
          'new RefreshTokens(): unknown option `revokeAccessToken` — did you mean `revokeAccessTokens`?',
        ),
      )
      const refresh = new RefreshTokens(db.refreshTokens, {
        ttl: 60,
        now: undefined,
        revokeAccessTokens: undefined,
      })
      const user = await db.users.create({ email: 'a@example.com', name: 'A', passwordHash: 'h' })
      expect(await refresh.ownerOf(await refresh.issue(user.id))).toBe(user.id)
    } finally {
      await db.close()
    }
  })
})

describe('openDatabase', () => {
  it('refuses a misspelt option before it opens anything', async () => {
    await expect(openDatabase('sqlite::memory:', untyped({ tablePrefx: 'app_' }))).rejects.toThrow(
      refused('openDatabase(): unknown option `tablePrefx` — did you mean `tablePrefix`?'),
    )
    // No server there: the refusal comes first, not a connection error.
    await expect(
      openDatabase('postgres://nobody@127.0.0.1:1/none', untyped({ maxx: 2 })),
    ).rejects.toThrow(refused('openDatabase(): unknown option `maxx` — did you mean `max`?'))
  })

  it('takes the SQLite options on SQLite', async () => {
    const db = await openDatabase('sqlite::memory:', { tablePrefix: 'app_', busyBudgetMs: 100 })
    try {
      await db.users.create({ email: 'a@example.com', name: 'A', passwordHash: 'h' })
      expect(await db.users.findByEmail('a@example.com')).toMatchObject({ name: 'A' })
    } finally {
      await db.close()
    }
  })

  it.runIf(postgresUp)('takes the PostgreSQL options on PostgreSQL (real server)', async () => {
    const db = await openDatabase(POSTGRES_URL, {
      tablePrefix: tables.next(),
      max: 2,
      connectionTimeoutMs: 2000,
      queryTimeoutMs: 5000,
      busyBudgetMs: 100,
    })
    try {
      await db.users.create({ email: 'a@example.com', name: 'A', passwordHash: 'h' })
      expect(await db.users.findByEmail('a@example.com')).toMatchObject({ name: 'A' })
    } finally {
      await db.close()
    }
  })
})

describe('createUser and hashPassword', () => {
  it('refuse a misspelt field or algorithm', async () => {
    const auth = createAuth({ secret: SECRET, database: 'sqlite::memory:' })
    try {
      const user = { email: 'a@example.com', name: 'A', password: 'correct horse', role: ['admin'] }
      await expect(createUser(auth, untyped(user))).rejects.toThrow(
        refused('createUser(): unknown option `role` — did you mean `roles`?'),
      )
      expect(await (await auth.database()).users.findByEmail('a@example.com')).toBeNull()
      await expect(hashPassword('correct horse', 'bcypt' as 'bcrypt')).rejects.toThrow(
        refused('hashPassword(): unknown algorithm `bcypt` — did you mean `bcrypt`?'),
      )
    } finally {
      await auth.close()
    }
  })

  it('still take their fields and algorithms', async () => {
    const auth = createAuth({ secret: SECRET, database: 'sqlite::memory:' })
    try {
      const user = {
        email: 'a@example.com',
        name: 'A',
        password: 'correct horse',
        roles: ['admin'],
      }
      expect(await createUser(auth, user)).toMatchObject({ roles: ['admin'] })
      expect(await hashPassword('correct horse', 'bcrypt')).toMatch(/^\$2b\$/)
      expect(await hashPassword('correct horse', 'argon2id')).toMatch(/^\$argon2id\$/)
    } finally {
      await auth.close()
    }
  })
})
