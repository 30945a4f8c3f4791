/**
 * A DATABASE_URL (or any connection URL) shown in an error keeps no credential: passwords holding
 * `/`, `@` or `?`, URLs without `//`, and secrets passed as query parameters included. The CLI
 * prints the message of an unsupported DATABASE_URL, and `fw serve` logs it.
 */
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/auth/stores/open.js'
import { redactUrl } from '../../src/shared/redact-url.js'

const CASES: [string, string][] = [
  ['postgres://app:s3cret@db:5432/x', 'postgres://***@db:5432/x'],
  ['postgres:/postgres:s3cret@127.0.0.1/x', 'postgres:***@127.0.0.1/x'],
  ['postgres:s3cret@h', 'postgres:***@h'],
  ['mysql://u:s3c/ret@h/db', 'mysql://***@h/db'],
  ['mysql://u:s3c@ret@h/db', 'mysql://***@h/db'],
  ['postgres://u:s3c?ret@h/db', 'postgres://***@h/db'],
  [
    'postgres://db/x?sslpassword=s3cret&sslmode=require',
    'postgres://db/x?sslpassword=***&sslmode=require',
  ],
  ['redis://h:6379?auth_token=s3cret', 'redis://h:6379?auth_token=***'],
  ['sqlite:.fw/app.db', 'sqlite:.fw/app.db'],
  ['garbage', 'garbage'],
]

describe('redactUrl', () => {
  it.each(CASES)('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
  })

  it('leaves no password in the error of an unsupported DATABASE_URL', async () => {
    for (const [url] of CASES.slice(0, 8)) {
      const error = (await openDatabase(url.replace(/^postgres/, 'pg')).catch(
        (e: Error) => e,
      )) as Error
      expect(error.message).toMatch(/^Unsupported DATABASE_URL/)
      expect(error.message).not.toMatch(/s3c|ret@/)
    }
  })
})
