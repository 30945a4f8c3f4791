/**
 * The adversarial token suite: every malformed, forged, expired or otherwise wrong bearer token
 * gets 401 from the 'auth' middleware (with WWW-Authenticate), never a 500 or a throw; a signed
 * `__proto__` roles claim grants nothing on a role route.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { authMiddleware, roleMiddleware } from '../../src/auth/middleware.js'
import { TokenService } from '../../src/auth/jwt.js'
import { MemoryRevocationList } from '../../src/auth/revocation.js'
import { createAuth, createUser } from '../../src/auth/auth.js'
import { b64, build, post, run, SECRET, withAuthorization } from './support.js'

const tokens = new TokenService({ secret: SECRET, withJti: true })
const revocations = new MemoryRevocationList()
const auth = build(authMiddleware({ tokens, revocations }))
const adminOnly = [auth, build(roleMiddleware(), ['admin'])]

const now = (): number => Math.floor(Date.now() / 1000)
const HEADER = { alg: 'HS256', typ: 'JWT' }
const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: 'framework-app',
  iat: now(),
  exp: now() + 3600,
  sub: 1,
  jti: randomBytes(16).toString('hex'),
  ...extra,
})
const without = (name: string): Record<string, unknown> => {
  const c = claims()
  delete c[name]
  return c
}

/** Signs header and payload (objects, or raw JSON text) with HMAC. */
function sign(
  header: unknown,
  payload: unknown,
  options: { secret?: string; hash?: string } = {},
): string {
  const input = `${b64(header)}.${b64(payload)}`
  const signature = createHmac(options.hash ?? 'sha256', options.secret ?? SECRET)
    .update(input)
    .digest('base64url')
  return `${input}.${signature}`
}

/** The same token with the last character of one segment changed to another valid spelling. */
function lastCharVariant(token: string, segment: number): string {
  const parts = token.split('.')
  const s = parts[segment]!
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(s.at(-1)!)
  // Flipping the lowest bit changes only bits that the decoder discards (unless s.length % 4 == 0).
  parts[segment] = s.slice(0, -1) + alphabet[last ^ 1]
  return parts.join('.')
}

const good = sign(HEADER, claims())
const [goodHeader, goodPayload, goodSignature] = good.split('.') as [string, string, string]
const bearer = (token: string): string => `Bearer ${token}`

interface Case {
  what: string
  headers: string[]
}

const CASES: Case[] = [
  { what: 'no Authorization header', headers: [] },
  { what: '"Bearer" and no token', headers: ['Bearer'] },
  { what: '"Bearer " and an empty token', headers: ['Bearer '] },
  { what: 'lowercase "bearer"', headers: [`bearer ${good}`] },
  { what: 'uppercase "BEARER"', headers: [`BEARER ${good}`] },
  { what: 'another scheme (Basic)', headers: [`Basic ${good}`] },
  { what: 'no scheme at all', headers: [good] },
  { what: 'two spaces after Bearer', headers: [`Bearer  ${good}`] },
  { what: 'a tab instead of the space', headers: [`Bearer\t${good}`] },
  { what: 'a trailing space', headers: [`Bearer ${good} `] },
  { what: 'a duplicated Authorization header (both valid)', headers: [bearer(good), bearer(good)] },
  {
    what: 'alg none, empty signature',
    headers: [bearer(`${b64({ alg: 'none', typ: 'JWT' })}.${goodPayload}.`)],
  },
  {
    what: 'alg none, HS256 signature kept',
    headers: [bearer(`${b64({ alg: 'none' })}.${goodPayload}.${goodSignature}`)],
  },
  {
    what: 'alg HS512 signed with the same secret',
    headers: [bearer(sign({ alg: 'HS512', typ: 'JWT' }, claims(), { hash: 'sha512' }))],
  },
  {
    what: 'alg HS384 signed with the same secret',
    headers: [bearer(sign({ alg: 'HS384', typ: 'JWT' }, claims(), { hash: 'sha384' }))],
  },
  {
    what: 'alg RS256 header, HMAC signature with the secret',
    headers: [bearer(sign({ alg: 'RS256', typ: 'JWT' }, claims()))],
  },
  {
    what: 'alg "hs256" in lowercase',
    headers: [bearer(sign({ alg: 'hs256', typ: 'JWT' }, claims()))],
  },
  {
    what: 'a wrong secret',
    headers: [bearer(sign(HEADER, claims(), { secret: 'another-secret-of-at-least-32-bytes!!' }))],
  },
  {
    what: 'a tampered header',
    headers: [bearer(`${b64({ alg: 'HS256', typ: 'JWS' })}.${goodPayload}.${goodSignature}`)],
  },
  {
    what: 'a tampered payload (sub changed)',
    headers: [bearer(`${goodHeader}.${b64({ ...claims(), sub: 2 })}.${goodSignature}`)],
  },
  {
    what: 'a tampered signature',
    headers: [
      bearer(
        `${goodHeader}.${goodPayload}.${goodSignature.slice(0, 10)}${goodSignature[10] === 'A' ? 'B' : 'A'}${goodSignature.slice(11)}`,
      ),
    ],
  },
  { what: 'a truncated signature', headers: [bearer(good.slice(0, -4))] },
  { what: 'no exp', headers: [bearer(sign(HEADER, without('exp')))] },
  { what: 'no sub', headers: [bearer(sign(HEADER, without('sub')))] },
  {
    what: 'expired an hour ago',
    headers: [bearer(sign(HEADER, claims({ iat: now() - 7200, exp: now() - 3600 })))],
  },
  {
    what: 'exp equal to now (exp gets no leeway)',
    headers: [bearer(sign(HEADER, claims({ iat: now() - 60, exp: now() })))],
  },
  {
    what: 'exp as a string',
    headers: [bearer(sign(HEADER, claims({ exp: String(now() + 3600) })))],
  },
  { what: 'exp as a fraction', headers: [bearer(sign(HEADER, claims({ exp: now() + 3600.5 })))] },
  {
    what: 'exp before iat',
    headers: [bearer(sign(HEADER, claims({ iat: now() + 10, exp: now() + 5 })))],
  },
  { what: 'iss mismatch', headers: [bearer(sign(HEADER, claims({ iss: 'someone-else' })))] },
  {
    what: 'iat two minutes in the future',
    headers: [bearer(sign(HEADER, claims({ iat: now() + 120, exp: now() + 3720 })))],
  },
  {
    what: 'nbf two minutes in the future',
    headers: [bearer(sign(HEADER, claims({ nbf: now() + 120 })))],
  },
  { what: 'non-integer sub (1.5)', headers: [bearer(sign(HEADER, claims({ sub: 1.5 })))] },
  { what: 'negative sub', headers: [bearer(sign(HEADER, claims({ sub: -1 })))] },
  { what: 'zero sub', headers: [bearer(sign(HEADER, claims({ sub: 0 })))] },
  { what: 'sub "000"', headers: [bearer(sign(HEADER, claims({ sub: '000' })))] },
  { what: 'a non-integer iat', headers: [bearer(sign(HEADER, claims({ iat: now() - 0.5 })))] },
  // Regression: jose compares nbf with the clock only, so a fraction in the past passed.
  { what: 'a non-integer nbf', headers: [bearer(sign(HEADER, claims({ nbf: now() - 0.5 })))] },
  { what: 'sub "abc"', headers: [bearer(sign(HEADER, claims({ sub: 'abc' })))] },
  { what: 'sub "1e3"', headers: [bearer(sign(HEADER, claims({ sub: '1e3' })))] },
  {
    what: 'sub beyond the safe integers',
    headers: [bearer(sign(HEADER, claims({ sub: 2 ** 53 })))],
  },
  { what: 'sub as an array', headers: [bearer(sign(HEADER, claims({ sub: [1] })))] },
  { what: 'jti as a number', headers: [bearer(sign(HEADER, claims({ jti: 12345 })))] },
  {
    what: 'a token over 8 KiB',
    headers: [bearer(sign(HEADER, claims({ pad: 'x'.repeat(9000) })))],
  },
  { what: 'a 1 MB token', headers: [bearer('a'.repeat(1_000_000))] },
  { what: 'an extra dot and segment', headers: [bearer(`${good}.${goodSignature}`)] },
  { what: 'a trailing dot', headers: [bearer(`${good}.`)] },
  { what: 'two segments only', headers: [bearer(`${goodHeader}.${goodPayload}`)] },
  { what: '"=" padding after the signature', headers: [bearer(`${good}=`)] },
  {
    what: '"==" padding after the payload',
    headers: [bearer(`${goodHeader}.${goodPayload}==.${goodSignature}`)],
  },
  { what: 'the last signature character varied', headers: [bearer(lastCharVariant(good, 2))] },
  {
    what: 'standard base64 "+" and "/"',
    headers: [bearer(good.replaceAll('-', '+').replaceAll('_', '/').replace(/.$/, '/'))],
  },
  {
    what: 'a header that is not JSON',
    headers: [bearer(`${b64('not json')}.${goodPayload}.${goodSignature}`)],
  },
  { what: 'a payload that is a JSON array, signed', headers: [bearer(sign(HEADER, '[1,2,3]'))] },
  { what: 'a payload that is JSON null, signed', headers: [bearer(sign(HEADER, 'null'))] },
  { what: 'a payload that is not JSON, signed', headers: [bearer(sign(HEADER, 'hello'))] },
  {
    what: 'a crit header, signed',
    headers: [bearer(sign({ ...HEADER, crit: ['exp'] }, claims()))],
  },
  {
    what: 'an unencoded payload (b64: false), signed',
    headers: [bearer(sign({ ...HEADER, b64: false, crit: ['b64'] }, claims()))],
  },
  {
    what: 'non-ASCII characters',
    headers: [bearer(`${goodHeader}.${goodPayload}.é${goodSignature}`)],
  },
  { what: 'random garbage', headers: [bearer('a.b.c')] },
]

describe('the auth middleware rejects bad tokens with 401', () => {
  it('has at least 30 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30)
  })

  it.each(CASES)('$what', async ({ headers }) => {
    const answer = await run([auth], withAuthorization(...headers))
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer( error="invalid_token")?$/)
    expect(answer.body.error).toEqual(expect.any(String))
  })

  it('says invalid_token only when a token was sent', async () => {
    expect((await run([auth], withAuthorization())).headers['www-authenticate']).toBe('Bearer')
    expect((await run([auth], withAuthorization('Bearer '))).headers['www-authenticate']).toBe(
      'Bearer',
    )
    expect(
      (await run([auth], withAuthorization(bearer('a.b.c')))).headers['www-authenticate'],
    ).toBe('Bearer error="invalid_token"')
  })

  it('answers 401 and never 500 for 500 random mutations of a good token', async () => {
    const alphabet = 'ABCxyz019-_.=+/ '
    for (let i = 0; i < 500; i++) {
      const chars = [...good]
      const at = Math.floor(Math.random() * chars.length)
      chars[at] = alphabet[Math.floor(Math.random() * alphabet.length)]!
      const mutated = chars.join('')
      const answer = await run([auth], withAuthorization(bearer(mutated)))
      expect(answer.status === 401 || (mutated === good && answer.status === 200)).toBe(true)
    }
  })
})

describe('the auth middleware accepts good tokens', () => {
  it('sets auth.user_id (a number), auth.payload and auth.roles', async () => {
    const token = await tokens.issue(7, { email: 'ada@example.com', roles: ['admin', 3, 'editor'] })
    const answer = await run([auth], withAuthorization(bearer(token)))
    expect(answer.status).toBe(200)
    expect(answer.body.user_id).toBe(7)
    expect(answer.body.roles).toEqual(['admin', 'editor'])
    expect(answer.body.payload).toMatchObject({
      sub: 7,
      email: 'ada@example.com',
      iss: 'framework-app',
    })
  })

  it('accepts a hand-signed token, a decimal-string sub and iat within the 30 s tolerance', async () => {
    const answer = await run(
      [auth],
      withAuthorization(bearer(sign(HEADER, claims({ sub: '42', iat: now() + 20 })))),
    )
    expect(answer.status).toBe(200)
    expect(answer.body.user_id).toBe(42)
    expect(answer.body.roles).toEqual([])
  })

  it('accepts a token without iss or iat (DESIGN.md requires only sub and exp) and a zero-padded sub', async () => {
    const minimal = { sub: '007', exp: now() + 60 }
    const answer = await run([auth], withAuthorization(bearer(sign(HEADER, minimal))))
    expect(answer.status).toBe(200)
    expect(answer.body.user_id).toBe(7)
  })
})

describe('revocation', () => {
  it('rejects a revoked token, every spelling of it, and any token with its jti', async () => {
    const jti = randomBytes(16).toString('hex')
    const token = sign(HEADER, claims({ jti }))
    expect((await run([auth], withAuthorization(bearer(token)))).status).toBe(200)
    await revocations.revoke(jti, now() + 3600)

    const revoked = await run([auth], withAuthorization(bearer(token)))
    expect(revoked).toMatchObject({ status: 401, body: { error: 'Token revoked' } })
    expect(revoked.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    for (const spelling of [lastCharVariant(token, 2), `${token}=`, lastCharVariant(token, 1)]) {
      expect((await run([auth], withAuthorization(bearer(spelling)))).status).toBe(401)
    }
    // Same jti, another signature (issued a second later, or the jti in capitals): still revoked.
    const again = sign(HEADER, claims({ jti, iat: now() + 1 }))
    expect((await run([auth], withAuthorization(bearer(again)))).body.error).toBe('Token revoked')
    const shouted = sign(HEADER, claims({ jti: jti.toUpperCase() }))
    expect((await run([auth], withAuthorization(bearer(shouted)))).body.error).toBe('Token revoked')
  })

  it('answers 503, not 500, when the revocation list is down', async () => {
    const down = {
      revoke: async () => true,
      isRevoked: async () => Promise.reject(new Error('ECONNREFUSED')),
    }
    const guarded = build(authMiddleware({ tokens, revocations: down }))
    const answer = await run([guarded], withAuthorization(bearer(await tokens.issue(1))))
    expect(answer.status).toBe(503)
  })
})

describe('revocation store failures on the endpoints', () => {
  const down = {
    revoke: async (): Promise<boolean> => Promise.reject(new Error('ECONNREFUSED')),
    isRevoked: async (): Promise<boolean> => false,
  }

  it('answers 503, not 500, on /auth/refresh and /auth/logout when the list cannot record the jti', async () => {
    const broken = createAuth({
      secret: SECRET,
      database: 'sqlite::memory:',
      revocations: down,
      production: false,
    })
    try {
      const user = await createUser(broken, {
        email: 'r@example.com',
        name: 'R',
        password: 'long enough pass',
      })
      const token = await broken.tokenService().issue(user.id, {}, { ttl: 200 })
      const refresh = post('/auth/refresh', { token })
      await refresh.loadBody()
      const refreshed = await run([], refresh, broken.handlers.refresh)
      expect(refreshed.status).toBe(503)
      const guard = build(authMiddleware({ tokens: broken.tokenService(), revocations: down }))
      const out = await run([guard], withAuthorization(bearer(token)), broken.handlers.logout)
      expect(out.status).toBe(503)
    } finally {
      await broken.close()
    }
  })

  it('answers 503 on logout when the memory list is full of live tokens, and keeps them revoked', async () => {
    const full = new MemoryRevocationList({ maxEntries: 1 })
    const tight = createAuth({
      secret: SECRET,
      database: 'sqlite::memory:',
      revocations: full,
      production: false,
    })
    try {
      const user = await createUser(tight, {
        email: 'f@example.com',
        name: 'F',
        password: 'long enough pass',
      })
      const first = await tight.tokenService().issue(user.id, {}, { ttl: 3600 })
      const second = await tight.tokenService().issue(user.id, {}, { ttl: 600 })
      const guard = build(authMiddleware({ tokens: tight.tokenService(), revocations: full }))
      expect(
        (await run([guard], withAuthorization(bearer(first)), tight.handlers.logout)).status,
      ).toBe(204)
      expect(
        (await run([guard], withAuthorization(bearer(second)), tight.handlers.logout)).status,
      ).toBe(503)
      expect((await run([guard], withAuthorization(bearer(first)))).body.error).toBe(
        'Token revoked',
      )
    } finally {
      await tight.close()
    }
  })
})

describe('the role middleware', () => {
  const roleCase = async (payload: unknown, params = ['admin']): Promise<number> => {
    const layers = [auth, build(roleMiddleware(), params)]
    return (await run(layers, withAuthorization(bearer(sign(HEADER, payload))))).status
  }

  it('lets a token with a required role through', async () => {
    expect(await roleCase(claims({ roles: ['admin'] }))).toBe(200)
    expect(await roleCase(claims({ roles: ['editor'] }), ['admin', 'editor'])).toBe(200)
  })

  it('answers 403 {error: "Forbidden"} without a shared role', async () => {
    const answer = await run(
      adminOnly,
      withAuthorization(bearer(sign(HEADER, claims({ roles: ['user'] })))),
    )
    expect(answer).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
  })

  it.each([
    ['no roles claim', claims()],
    ['an empty roles claim', claims({ roles: [] })],
    ['roles as a string', claims({ roles: 'admin' })],
    ['roles as an object', claims({ roles: { 0: 'admin', length: 1 } })],
    ['roles of non-strings', claims({ roles: [['admin'], { admin: true }] })],
    ['a differently cased role', claims({ roles: ['Admin'] })],
  ])('answers 403 for %s', async (_what, payload) => {
    expect(await roleCase(payload)).toBe(403)
  })

  it('answers 403 for a signed __proto__ roles claim (top level and nested)', async () => {
    const base = JSON.stringify(claims()).slice(1, -1)
    expect(await roleCase(`{"__proto__":{"roles":["admin"]},${base}}`)).toBe(403)
    expect(await roleCase(`{${base},"roles":{"__proto__":["admin"]}}`)).toBe(403)
    expect(({} as Record<string, unknown>).roles).toBeUndefined()
  })

  it('answers 401 before the role check when the token is bad', async () => {
    expect((await run(adminOnly, withAuthorization('bearer x'))).status).toBe(401)
  })

  it('refuses an alias without roles at boot', () => {
    expect(() => build(roleMiddleware(), [])).toThrow(/at least one role/)
    expect(() => build(authMiddleware({ tokens }), ['x'])).toThrow(/no parameters/)
  })
})
