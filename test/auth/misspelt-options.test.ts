/**
 * A misspelt createAuth option from plain JavaScript was ignored without a word:
 * `createAuth({ secrt: process.env.JWT_SECRET })` signed with a random secret (tokens stopped
 * verifying at each restart), `{ databse: url }` wrote users to .fw/app.db. It is refused where
 * the Auth is made, naming the closest valid option.
 */
import { describe, expect, it } from 'vitest'
import { Auth, authOptionsFromEnv, createAuth, type AuthOptions } from '../../src/auth/index.js'

describe('createAuth options', () => {
  it('refuses a misspelt option, naming the one it resembles', () => {
    const given = { secrt: 'x'.repeat(32) } as AuthOptions
    expect(() => createAuth(given)).toThrow(
      new TypeError('createAuth(): unknown option `secrt` — did you mean `secret`?'),
    )
    expect(() => new Auth({ databse: 'sqlite::memory:' } as AuthOptions)).toThrow(
      new TypeError('createAuth(): unknown option `databse` — did you mean `database`?'),
    )
  })

  it('takes what authOptionsFromEnv gives, and every option set to undefined', () => {
    const env = {
      JWT_SECRET: 'x'.repeat(32),
      DATABASE_URL: 'sqlite::memory:',
      REDIS_URL: 'redis://127.0.0.1:6379',
      APP_ENV: 'production',
    }
    expect(createAuth(authOptionsFromEnv(env))).toBeInstanceOf(Auth)
    const every: { [K in keyof Required<AuthOptions>]: undefined } = {
      secret: undefined,
      issuer: undefined,
      audience: undefined,
      ttl: undefined,
      production: undefined,
      database: undefined,
      tablePrefix: undefined,
      revocations: undefined,
      now: undefined,
      log: undefined,
    }
    expect(createAuth(every)).toBeInstanceOf(Auth)
  })
})
