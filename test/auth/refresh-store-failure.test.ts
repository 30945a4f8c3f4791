/**
 * POST /rt/auth/refresh when the user store fails mid-way: nothing rotates, so the client's retry
 * with the refresh token it holds succeeds, rather than reading as reuse of a stolen token and
 * ending the session. The failure is real: the users table is moved away on the live database.
 */
import BetterSqlite3 from 'better-sqlite3'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuth, createUser, type Auth } from '../../src/auth/auth.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'
import { SECRET, send, serveAuthApp, type AuthApp } from './support.js'

let auth: Auth
let app: AuthApp
let dbPath: string

beforeAll(async () => {
  dbPath = join(tempDir('fw-refresh-failure-'), 'app.db')
  auth = createAuth({ secret: SECRET, database: `sqlite:${dbPath}`, production: false })
  app = await serveAuthApp(auth)
  await createUser(auth, { email: 'ada@example.com', name: 'Ada', password: 'correct horse' })
})

afterAll(async () => {
  await app.close()
  await auth.close()
  cleanupTempDirs()
})

/** Runs `body` while the users table cannot be read (renamed through a second connection). */
async function withUsersGone<T>(body: () => Promise<T>): Promise<T> {
  const admin = new BetterSqlite3(dbPath)
  admin.exec('ALTER TABLE users RENAME TO users_away')
  try {
    return await body()
  } finally {
    admin.exec('ALTER TABLE users_away RENAME TO users')
    admin.close()
  }
}

describe('POST /rt/auth/refresh with the user store failing', () => {
  it('answers 503 and rotates nothing: the retry with the same token succeeds and the session lives on', async () => {
    const login = await send(app, 'POST', '/rt/auth/login', {
      json: { email: 'ada@example.com', password: 'correct horse' },
    })
    expect(login.status).toBe(200)
    const held = login.body.refresh_token as string

    const failed = await withUsersGone(() =>
      send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: held } }),
    )
    expect(failed.status).toBe(503)
    expect(failed.body).not.toHaveProperty('refresh_token')

    const retry = await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: held } })
    expect(retry.status).toBe(200)
    const next = retry.body.refresh_token as string
    expect(next).toMatch(/^[0-9a-f]{64}$/)
    expect(next).not.toBe(held)
    // Not treated as theft: the successor keeps working, and the used token is refused.
    const again = await send(app, 'POST', '/rt/auth/refresh', { json: { refresh_token: next } })
    expect(again.status).toBe(200)
  })
})
