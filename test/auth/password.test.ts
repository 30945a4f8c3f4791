/** Password hashing and verification: bcrypt ($2a$, $2b$, PHP's $2y$), argon2id, malformed hashes. */
import * as argon2 from '@node-rs/argon2'
import * as bcrypt from '@node-rs/bcrypt'
import { describe, expect, it } from 'vitest'
import {
  checkNewPassword,
  hashPassword,
  MAX_PASSWORD_BYTES,
  needsRehash,
  verifyDummy,
  verifyPassword,
} from '../../src/auth/password.js'

// The example hash of PHP's password_verify() manual page, made by password_hash().
const PHP_2Y = '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a'

describe('verifyPassword', () => {
  it.each(['2a', '2b', '2y'])('verifies a $%s$ bcrypt hash', async (version) => {
    const hash = (await bcrypt.hash('secret', 4)).replace(/^\$2[aby]\$/, `$${version}$`)
    expect(hash.startsWith(`$${version}$`)).toBe(true)
    expect(await verifyPassword('secret', hash)).toBe(true)
    expect(await verifyPassword('Secret', hash)).toBe(false)
  })

  it('verifies a hash made by PHP', async () => {
    expect(await verifyPassword('rasmuslerdorf', PHP_2Y)).toBe(true)
    expect(await verifyPassword('rasmuslerdorF', PHP_2Y)).toBe(false)
  })

  it('verifies a $2y$ hash made by relabelling a $2b$ one (PHP and OpenBSD share the algorithm)', async () => {
    const hash = (await bcrypt.hash('pässwörd', 4)).replace(/^\$2[aby]\$/, '$2y$')
    expect(await verifyPassword('pässwörd', hash)).toBe(true)
  })

  it('verifies argon2id (and argon2i) hashes', async () => {
    const id = await hashPassword('correct horse')
    expect(id).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(await verifyPassword('correct horse', id)).toBe(true)
    expect(await verifyPassword('correct horsE', id)).toBe(false)
    const i = await argon2.hash('correct horse', {
      algorithm: 1 as argon2.Algorithm,
      memoryCost: 4096,
      timeCost: 1,
    })
    expect(await verifyPassword('correct horse', i)).toBe(true)
  })

  it.each([
    ['empty', ''],
    ['plain text', 'secret'],
    ['truncated bcrypt', '$2b$04$wgLy5kl5SrvD86h6N6oIo.rSynJt7NT5nprNz5/'],
    ['bcrypt with a bad cost', '$2b$99$wgLy5kl5SrvD86h6N6oIo.rSynJt7NT5nprNz5/yNSKDAUHTF.pgy'],
    ['unknown bcrypt version $2x$', '$2x$04$wgLy5kl5SrvD86h6N6oIo.rSynJt7NT5nprNz5/yNSKDAUHTF.pgy'],
    ['a PHP hash cut short', PHP_2Y.slice(0, -1)],
    ['argon2id with garbage', '$argon2id$v=19$m=19456,t=2,p=1$abc$def'],
    [
      'argon2d (not accepted)',
      '$argon2d$v=19$m=19456,t=2,p=1$9E25yscy133949IU765JcQ$0EJOWVFEF38oSQJ/X8ZlbjUN7yackBynsclzeWPaVvY',
    ],
    ['md5 crypt', '$1$salt$qJH7.N4xYta3aEG/dfqo/0'],
    ['a number', 42],
    ['null', null],
  ])('treats a malformed stored hash (%s) as a mismatch, never a throw', async (_what, hash) => {
    await expect(verifyPassword('secret', hash)).resolves.toBe(false)
  })

  // Each a genuine hash of 'secret' (made once, offline) with one cost just over its cap (bcrypt
  // cost 14; argon2 128 MiB, 16 passes, 16 lanes): were it run, the password would match.
  it.each([
    ['bcrypt cost 15', '$2y$15$ReY.yGukKMUm.WtbmnxmOOn393pNmMJ7egxFychiSESGbPnPGvrfa'],
    [
      'argon2 over the memory cap',
      '$argon2id$v=19$m=131073,t=1,p=1$lQTJ0+87ga27fI/S5nsYjg$//bgDh+Xm4SvTdjKMDIHpkGaqAT3/94/DlGk+rDRRjY',
    ],
    [
      'argon2 over the passes cap',
      '$argon2id$v=19$m=8,t=17,p=1$Nw6tc1tcP+ldIyqWGeK5vA$nMSFvHpLxPqTALnUpJrMCFTOjTjQ/wYmLl/qgNiA+pU',
    ],
    [
      'argon2 over the lanes cap',
      '$argon2id$v=19$m=136,t=1,p=17$fXy2hH4ByjPdhzqeiY1Qkg$vghxEPz4EsrfGt63TWjxm7cz5HEjcUlSJXGeuUVs/xQ',
    ],
  ])('refuses to run a hash whose cost is over the caps (%s): a mismatch', async (_what, hash) => {
    expect(await verifyPassword('secret', hash)).toBe(false)
  })

  it('still runs a hash of the same kind within the caps', async () => {
    const cheap = await argon2.hash('secret', { memoryCost: 8, timeCost: 16, parallelism: 1 })
    expect(await verifyPassword('secret', cheap)).toBe(true)
  })

  it('refuses passwords that are empty, not strings, or over the byte bound', async () => {
    const hash = await hashPassword('x'.repeat(MAX_PASSWORD_BYTES))
    expect(await verifyPassword('x'.repeat(MAX_PASSWORD_BYTES), hash)).toBe(true)
    expect(await verifyPassword('x'.repeat(MAX_PASSWORD_BYTES + 1), hash)).toBe(false)
    expect(await verifyPassword('', hash)).toBe(false)
    expect(await verifyPassword(['x'], hash)).toBe(false)
  })
})

describe('hashPassword', () => {
  it('hashes with argon2id by default and bcrypt when asked', async () => {
    expect(await hashPassword('secret-1')).toMatch(/^\$argon2id\$/)
    const b = await hashPassword('secret-1', 'bcrypt')
    expect(b).toMatch(/^\$2b\$12\$/)
    expect(await verifyPassword('secret-1', b)).toBe(true)
  })

  it('refuses empty passwords, passwords over the bound, and over 72 bytes for bcrypt', async () => {
    await expect(hashPassword('')).rejects.toThrow(RangeError)
    await expect(hashPassword('x'.repeat(MAX_PASSWORD_BYTES + 1))).rejects.toThrow(RangeError)
    await expect(hashPassword('é'.repeat(37), 'bcrypt')).rejects.toThrow(/72 bytes/)
    expect(await hashPassword('é'.repeat(37))).toMatch(/^\$argon2id\$/)
  })
})

describe('verifyDummy and needsRehash', () => {
  it('verifyDummy always answers false', async () => {
    expect(await verifyDummy('anything')).toBe(false)
    expect(await verifyDummy(undefined)).toBe(false)
  })

  it('wants bcrypt and weak argon2 hashes upgraded, not current ones', async () => {
    expect(needsRehash(await bcrypt.hash('x', 4))).toBe(true)
    expect(
      needsRehash(
        await argon2.hash('x', { algorithm: 2 as argon2.Algorithm, memoryCost: 4096, timeCost: 1 }),
      ),
    ).toBe(true)
    expect(needsRehash(await hashPassword('x'))).toBe(false)
    expect(needsRehash('garbage')).toBe(true)
  })
})

describe('checkNewPassword', () => {
  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['short', /too short/],
    ['aaaaaaaaaaaa', /too weak/],
    ['x'.repeat(MAX_PASSWORD_BYTES + 1), /longer than/],
  ])('refuses %j', (password, problem) => {
    expect(checkNewPassword(password)).toMatch(problem)
  })

  it('accepts a decent password', () => {
    expect(checkNewPassword('correct horse battery')).toBeNull()
  })
})
