/**
 * Time lens over real HTTP: access tokens at the edges of exp, nbf and iat (DESIGN.md: exp
 * required, iat/nbf in the future beyond 30 s of clock tolerance is a 401), time claims of odd
 * types and sizes, and expires_in against the token's own exp. The server's clock is injected
 * (`now`), so each edge is hit to the second without waiting.
 */
import { createHmac } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createUser } from '../../src/auth/auth.js'
import { cleanupTempDirs } from '../support/compile.js'
import {
  IN_CI,
  POSTGRES_URL,
  SECRET,
  b64,
  pgTables,
  reachable,
  send,
  startAuthRun,
  type AuthRun,
} from './support.js'

afterAll(() => cleanupTempDirs())

const PASSWORD = 'correct horse battery'
/** The server's clock: half a second into the Unix second N. */
const N = 1_800_000_000
let NOW_MS = N * 1000 + 500

function sign(claims: Record<string, unknown>): string {
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`
}

async function withServer(test: (run: AuthRun, userId: number) => Promise<void>): Promise<void> {
  NOW_MS = N * 1000 + 500
  const run = await startAuthRun({ database: 'sqlite::memory:', now: () => NOW_MS })
  try {
    const user = await createUser(run.auth, {
      email: 'ada@example.com',
      name: 'Ada',
      password: PASSWORD,
    })
    await test(run, user.id)
  } finally {
    await run.stop()
  }
}

describe('access-token time claims at their edges', () => {
  it('refuses exp at now and before, takes exp one second later', async () => {
    await withServer(async (run, sub) => {
      const me = (claims: Record<string, unknown>) =>
        send(run.app, 'GET', '/auth/me', { token: sign({ sub, iat: N - 10, ...claims }) })
      expect((await me({ exp: N - 1 })).status).toBe(401)
      expect((await me({ exp: N })).status).toBe(401)
      expect((await me({ exp: N + 1 })).status).toBe(200)
    })
  })

  it('takes nbf and iat up to 30 s ahead, refuses them a second further', async () => {
    await withServer(async (run, sub) => {
      const me = (claims: Record<string, unknown>) =>
        send(run.app, 'GET', '/auth/me', { token: sign({ sub, exp: N + 600, ...claims }) })
      expect((await me({ iat: N, nbf: N + 30 })).status).toBe(200)
      expect((await me({ iat: N, nbf: N + 31 })).status).toBe(401)
      expect((await me({ iat: N + 30 })).status).toBe(200)
      expect((await me({ iat: N + 31 })).status).toBe(401)
    })
  })

  it('refuses time claims that are not integer Unix seconds', async () => {
    await withServer(async (run, sub) => {
      const me = (claims: Record<string, unknown>) =>
        send(run.app, 'GET', '/auth/me', { token: sign({ sub, iat: N, exp: N + 600, ...claims }) })
      for (const claims of [
        { exp: 1e20 },
        { exp: N + 600.5 },
        { exp: String(N + 600) },
        { exp: null },
        { exp: -1 },
        { iat: N + 0.5 },
        { iat: String(N) },
        { iat: N + 600 }, // issued at its own expiry
        { nbf: N + 0.5 },
        { nbf: String(N) },
        { nbf: 1e20 },
      ]) {
        const answer = await me(claims)
        expect(answer.status, JSON.stringify(claims)).toBe(401)
      }
    })
  })

  it('answers expires_in equal to exp - iat of the token it hands out', async () => {
    await withServer(async (run) => {
      const claimsOf = (token: string) =>
        JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
          iat: number
          exp: number
        }
      const credentials = { email: 'ada@example.com', password: PASSWORD }
      const rt = await send(run.app, 'POST', '/rt/auth/login', { json: credentials })
      expect(rt.status, rt.text).toBe(200)
      const access = claimsOf(rt.body.access_token as string)
      expect([access.iat, access.exp - access.iat]).toEqual([N, rt.body.expires_in])
      const oauth = await send(run.app, 'POST', '/oauth/token', {
        json: { grant_type: 'password', username: credentials.email, password: PASSWORD },
      })
      expect(oauth.status, oauth.text).toBe(200)
      const token = claimsOf(oauth.body.access_token as string)
      expect(token.exp - token.iat).toBe(oauth.body.expires_in)
    })
  })

  it('refreshes with 300 s or less left, not 301', async () => {
    await withServer(async (run, sub) => {
      const refresh = (exp: number) =>
        send(run.app, 'POST', '/auth/refresh', {
          json: { token: sign({ sub, iat: N - 600, exp }) },
        })
      expect((await refresh(N + 301)).status).toBe(400)
      const fresh = await refresh(N + 300)
      expect(fresh.status, fresh.text).toBe(200)
      expect((await refresh(N)).status).toBe(400)
    })
  })

  it('keeps a logged-out token refused up to its last second, in the in-memory list', async () => {
    await withServer(async (run, sub) => {
      const token = sign({ sub, iat: N, exp: N + 100, jti: 'a'.repeat(32) })
      expect((await send(run.app, 'GET', '/auth/me', { token })).status).toBe(200)
      expect((await send(run.app, 'POST', '/auth/logout', { token })).status).toBe(204)
      NOW_MS = (N + 100) * 1000 - 1 // the token's last millisecond
      const me = await send(run.app, 'GET', '/auth/me', { token })
      expect(me.status).toBe(401)
      expect(me.text).toContain('revoked')
    })
  })
})

const RUN_PG = IN_CI || (await reachable(POSTGRES_URL))
const tables = pgTables('audit27')
afterAll(() => tables.drop())

/** POSTGRES_URL with the session time zone set to `zone` (libpq's `options`). */
function inZone(url: string, zone: string): string {
  const u = new URL(url)
  u.searchParams.set('options', `-c TimeZone=${zone}`)
  return u.toString()
}

describe('refresh-token expiry whatever the time zones of Node and the database', () => {
  const DAY = 86_400_000
  const stores = [
    ['SQLite', () => 'sqlite::memory:'],
    ...(RUN_PG
      ? ([
          [
            'PostgreSQL, session TimeZone Pacific/Kiritimati',
            () => inZone(POSTGRES_URL, 'Pacific/Kiritimati'),
          ],
        ] as const)
      : []),
  ] as const

  for (const [name, database] of stores) {
    it(`${name}: a refresh token works until 30 days after issue, not a second more`, async () => {
      const zone = process.env.TZ
      process.env.TZ = 'America/St_Johns'
      let now = N * 1000 + 250
      const run = await startAuthRun({
        database: database(),
        tablePrefix: name === 'SQLite' ? undefined : tables.next(),
        now: () => now,
      })
      try {
        await createUser(run.auth, { email: 'ada@example.com', name: 'Ada', password: PASSWORD })
        const login = async () => {
          const answer = await send(run.app, 'POST', '/rt/auth/login', {
            json: { email: 'ada@example.com', password: PASSWORD },
          })
          expect(answer.status, answer.text).toBe(200)
          return answer.body.refresh_token as string
        }
        const rotate = (token: string) =>
          send(run.app, 'POST', '/rt/auth/refresh', { json: { refresh_token: token } })
        const early = await login()
        const late = await login()
        now += 30 * DAY - 1000 // the record's last second
        const kept = await rotate(early)
        expect(kept.status, kept.text).toBe(200)
        now += 1000 // issue time plus 2592000 s
        expect((await rotate(late)).status).toBe(401)
      } finally {
        await run.stop()
        if (zone === undefined) delete process.env.TZ
        else process.env.TZ = zone
      }
    })
  }
})
