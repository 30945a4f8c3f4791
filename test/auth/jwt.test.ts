/** TokenService: the claims it writes, what it verifies, and the secret rules. */
import { jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { TokenService } from '../../src/auth/jwt.js'
import { FwError } from '../../src/shared/errors.js'
import { SECRET } from './support.js'

const decode = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>

describe('TokenService.issue', () => {
  it('writes iss, iat, exp = iat + ttl, an integer sub, and the extra claims', async () => {
    const tokens = new TokenService({ secret: SECRET, now: () => 1_700_000_000_500 })
    const token = await tokens.issue(5, { email: 'ada@example.com', name: 'Ada' })
    expect(decode(token)).toEqual({
      email: 'ada@example.com',
      name: 'Ada',
      iss: 'framework-app',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
      sub: 5,
    })
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as unknown
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' })
  })

  it('adds a 32-hex jti when asked, and honours issuer and ttl', async () => {
    const tokens = new TokenService({ secret: SECRET, issuer: 'acme', ttl: 900, withJti: true })
    const claims = decode(await tokens.issue(1))
    expect(claims.jti).toMatch(/^[0-9a-f]{32}$/)
    expect(claims.iss).toBe('acme')
    expect((claims.exp as number) - (claims.iat as number)).toBe(900)
    expect(decode(await tokens.issue(1, {}, { ttl: 60 })).exp).toBe(
      (decode(await tokens.issue(1)).iat as number) + 60,
    )
  })

  it('does not let extra claims override the registered ones', async () => {
    const tokens = new TokenService({ secret: SECRET })
    const claims = decode(
      await tokens.issue(1, { sub: 99, iss: 'evil', exp: 1e12, iat: 0, jti: 'x' }),
    )
    expect(claims).toMatchObject({ sub: 1, iss: 'framework-app' })
    expect(claims.jti).toBeUndefined()
    expect(claims.exp).toBeLessThan(1e11)
  })

  it('refuses a sub that is not a positive integer', async () => {
    const tokens = new TokenService({ secret: SECRET })
    for (const sub of [0, -1, 1.5, Number.NaN, 2 ** 53])
      await expect(tokens.issue(sub)).rejects.toThrow(TypeError)
  })
})

describe('TokenService.verify', () => {
  it('returns the payload of a good token, in null-prototype objects', async () => {
    const tokens = new TokenService({ secret: SECRET })
    const payload = await tokens.verify(await tokens.issue(3, { profile: { city: 'Paris' } }))
    expect(payload).toMatchObject({ sub: 3, profile: { city: 'Paris' } })
    expect(Object.getPrototypeOf(payload)).toBeNull()
    expect(Object.getPrototypeOf(payload!.profile)).toBeNull()
  })

  it('never throws, whatever it is given', async () => {
    const tokens = new TokenService({ secret: SECRET })
    for (const input of [
      undefined,
      null,
      42,
      {},
      [],
      '',
      '...',
      'a.b.c',
      '\u0000.\u0000.\u0000',
      'é.é.é',
    ]) {
      await expect(tokens.verify(input)).resolves.toBeNull()
    }
  })

  it('expires at exp exactly, and accepts iat up to 30 s in the future', async () => {
    let now = 1_700_000_000_000
    const tokens = new TokenService({ secret: SECRET, ttl: 100, now: () => now })
    const token = await tokens.issue(1)
    now += 99_000
    expect(await tokens.verify(token)).not.toBeNull()
    now += 1_000
    expect(await tokens.verify(token)).toBeNull()

    now = 1_700_000_000_000 - 30_000
    expect(await tokens.verify(token)).not.toBeNull()
    now -= 1_000
    expect(await tokens.verify(token)).toBeNull()
  })

  it('rejects other spellings of a token that jose alone accepts (regression: non-canonical base64url)', async () => {
    const tokens = new TokenService({ secret: SECRET })
    const token = await tokens.issue(1)
    const key = new TextEncoder().encode(SECRET)
    const spellings = [
      `${token}=`,
      token.replace(/.$/, (c) => String.fromCharCode(c.charCodeAt(0) ^ 1)),
    ]
    const canonical = spellings.filter(
      (s) => Buffer.from(s.split('.')[2]!, 'base64url').toString('base64url') === s.split('.')[2],
    )
    expect(canonical).toEqual([])
    await expect(jwtVerify(`${token}=`, key)).resolves.toBeDefined()
    for (const spelling of spellings) expect(await tokens.verify(spelling)).toBeNull()
  })
})

describe('the secret', () => {
  it('may be short outside production, not empty', () => {
    expect(() => new TokenService({ secret: 'short', production: false })).not.toThrow()
    expect(() => new TokenService({ secret: '', production: false })).toThrow(FwError)
  })

  it('must be at least 32 bytes in production', () => {
    expect(() => new TokenService({ secret: 'x'.repeat(31), production: true })).toThrow(
      /at least 32/,
    )
    expect(() => new TokenService({ secret: 'x'.repeat(32), production: true })).not.toThrow()
    expect(() => new TokenService({ secret: new Uint8Array(32), production: true })).not.toThrow()
  })

  it('does not verify tokens of another secret', async () => {
    const a = new TokenService({ secret: SECRET })
    const b = new TokenService({ secret: `${SECRET}-other` })
    expect(await b.verify(await a.issue(1))).toBeNull()
  })
})
