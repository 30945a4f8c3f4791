/**
 * Audit 8: a sweep of DESIGN.md against the real product, for the claims the other end-to-end
 * tests leave unasserted: the cache `fw serve` writes for the example app (manifest fields, shard
 * names, content hashes), what its `router.mjs` exports and answers, the example's route table
 * (paths, names, middleware, group ones first), and the claims of the tokens the example issues.
 * One `fw serve --routes routes.example.ts` serves the whole file.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  createUsers,
  list,
  makeProject,
  runScript,
} from '../support/project.js'
import {
  bearer,
  claimsOf,
  clientOf,
  freshClient,
  serveApp,
  type ServedApp,
} from '../support/server.js'

const SECRET = 'audit-8-sweep-secret-of-at-least-32-bytes'
const PASSWORD = 'correct horse battery staple'

let app: ServedApp
let dir: string
let cache: string

const { send, get, postJson } = clientOf(() => app)

interface Manifest {
  formatVersion: number
  generation: string
  fingerprint: string
  contentHash: string
  routeCount: number
  shards: { file: string; host: string | null; bucket: string; routes: number; sha256: string }[]
}

interface RouteMeta {
  id: number
  method: string
  host: string | null
  path: string
  name: string | null
  middleware: string[]
}

beforeAll(async () => {
  assertBuilt()
  dir = makeProject()
  cache = join(dir, 'cache')
  const env = { JWT_SECRET: SECRET, DATABASE_URL: `sqlite:${join(dir, 'app.db')}` }
  await createUsers(env, PASSWORD, [
    { email: 'ada@example.com', name: 'Ada', roles: 'admin' },
    { email: 'bob@example.com', name: 'Bob' },
  ])
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', cache], {
    env: { ...env, APP_URL: '' },
  })
})

afterAll(async () => {
  expect(await app?.stop()).toBe(0)
  cleanupProjects()
})

/** The example's route table, as the `routes` export of the cache fw serve built. */
async function exportedRoutes(): Promise<RouteMeta[]> {
  const { code, stdout, stderr } = await runScript(
    `import { routes } from './cache/router.mjs'\nconsole.log(JSON.stringify(routes))`,
    { cwd: dir },
  )
  expect(stderr).toBe('')
  expect(code).toBe(0)
  return JSON.parse(stdout) as RouteMeta[]
}

describe('audit 8: the cache fw serve wrote for the example app', () => {
  let routes: RouteMeta[]

  beforeAll(async () => {
    routes = await exportedRoutes()
  })

  // DESIGN "The generated cache": one module per shard, sharded by (host, first literal
  // segment), `<host>.<bucket>.mjs` for domain routes, `__dynamic.mjs` for a parameter first,
  // `__names.mjs`; a manifest with format version, generation, fingerprint, route count, shard
  // list and content hashes; `router.mjs`, the stable entry.
  it('publishes a manifest naming one generation, its shards and their content hashes', () => {
    const manifest = JSON.parse(readFileSync(join(cache, 'manifest.json'), 'utf8')) as Manifest
    expect(manifest).toMatchObject({
      formatVersion: expect.any(Number),
      generation: expect.stringMatching(/^generation-\d+-[0-9a-f]+$/),
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(list(cache).filter((name) => name.startsWith('generation-'))).toEqual([
      manifest.generation,
    ])
    expect(readFileSync(join(cache, 'router.mjs'), 'utf8')).toContain(
      `./${manifest.generation}/index.mjs`,
    )
    const generation = join(cache, manifest.generation)
    expect(list(generation)).toEqual(expect.arrayContaining(['__names.mjs', 'index.mjs']))
    const byFile = new Map(manifest.shards.map((shard) => [shard.file, shard]))
    expect(byFile.get('{account}.localhost.whoami.mjs')).toMatchObject({
      host: '{account}.localhost',
      bucket: 'whoami',
      routes: 1,
    })
    // The catch-all fallback's first segment is a parameter.
    expect(byFile.get('__dynamic.mjs')).toMatchObject({ host: null, routes: 1 })
    for (const bucket of ['admin', 'api', 'auth', 'demo', 'oauth', 'rt'])
      expect(byFile.get(`${bucket}.mjs`)).toMatchObject({ host: null, bucket })
    for (const shard of manifest.shards) {
      const text = readFileSync(join(generation, shard.file))
      expect(createHash('sha256').update(text).digest('hex'), shard.file).toBe(shard.sha256)
    }
    expect(manifest.routeCount).toBe(routes.length)
    // A shard's `routes` counts every route it serves: /demo has four methods on /demo/echo and
    // two on /demo/resource, once counted as one route a path (17 of 21), and all add up.
    for (const shard of manifest.shards.filter((s) => s.host === null && s.bucket !== '__dynamic'))
      expect(shard.routes, shard.file).toBe(
        routes.filter((r) => r.host === null && r.path.split('/')[1] === shard.bucket).length,
      )
    expect(manifest.shards.reduce((sum, shard) => sum + shard.routes, 0)).toBe(manifest.routeCount)
    expect(app.output()).toContain(`(${manifest.routeCount} routes, development)`)
  })

  // DESIGN: router.mjs exports match (a hit `{ route, params }`, route with id, name and
  // middleware, int params as numbers, an absent optional as null, a miss with status and allow;
  // HEAD falls back to GET), `load()`, urlFor(name, params = {}, query = {}, absolute = false)
  // and routes (each route's full middleware list, group ones first).
  it('exports match, urlFor, routes and load that answer as DESIGN says', async () => {
    const script = `
      import * as router from './cache/router.mjs'
      await router.load()
      const { match, urlFor, routes } = router
      const hit = (m) => ('route' in m ? { id: m.route.id, name: m.route.name, middleware: m.route.middleware, params: m.params } : m)
      console.log(JSON.stringify({
        types: [typeof match, typeof urlFor, typeof router.load, Array.isArray(routes)],
        user: hit(match('GET', '/api/v1/users/42')),
        head: hit(match('HEAD', '/api/v2/users/7')),
        optional: hit(match('GET', '/demo/optional')),
        tenant: hit(match('GET', '/whoami', 'acme.localhost')),
        otherMethod: match('DELETE', '/api/v1/users/1'),
        limited: hit(match('GET', '/api/v1/limited')),
        urls: [
          urlFor('v1.users.show', { id: 3 }),
          urlFor('v1.users.show', { id: 3 }, { tab: 'a b' }),
          urlFor('v1.users.show', { id: 3 }, { tab: 'a b' }, true),
          urlFor('demo.optional'),
          urlFor('demo.optional', { name: 'ada' }),
        ],
        ids: routes.map((route) => route.id),
      }))`
    const { code, stdout, stderr } = await runScript(script, {
      cwd: dir,
      env: { APP_URL: 'https://app.example' },
    })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const result = JSON.parse(stdout)
    expect(result.types).toEqual(['function', 'function', 'function', true])
    const id = expect.any(Number)
    expect(result.user).toEqual({
      id,
      name: 'v1.users.show',
      middleware: ['throttle:60,60'],
      params: { id: 42 },
    })
    expect(result.head).toEqual({ id, name: 'v2.users.show', middleware: [], params: { id: 7 } })
    expect(result.optional).toMatchObject({ name: 'demo.optional', params: { name: null } })
    expect(result.tenant).toMatchObject({ name: 'tenant.whoami', params: { account: 'acme' } })
    expect(result.otherMethod).toEqual({ status: 405, allow: ['GET', 'HEAD'] })
    expect(result.limited).toMatchObject({
      name: 'v1.limited',
      middleware: ['throttle:60,60', 'throttle:5,60'],
    })
    expect(result.urls).toEqual([
      '/api/v1/users/3',
      '/api/v1/users/3?tab=a%20b',
      'https://app.example/api/v1/users/3?tab=a%20b',
      '/demo/optional',
      '/demo/optional/ada',
    ])
    // Route ids are distinct, so a hit names one route of the table.
    expect(new Set(result.ids).size).toBe(result.ids.length)
  })

  // DESIGN "The example application": every route with its path, method, name and middleware.
  it('holds every route of the example app with its method, path, name and middleware', () => {
    const find = (method: string, path: string, host: string | null = null): RouteMeta => {
      const found = routes.find((r) => r.method === method && r.path === path && r.host === host)
      expect(found, `${method} ${host ?? ''}${path}`).toBeDefined()
      return found!
    }
    for (const path of ['/auth/login', '/rt/auth/login', '/oauth/token'])
      expect(find('POST', path).middleware[0]).toBe('throttle:5,300')
    for (const path of ['/auth/refresh', '/rt/auth/refresh', '/auth/logout']) find('POST', path)
    expect(find('GET', '/auth/me').middleware).toContain('auth')
    expect(find('POST', '/auth/logout').middleware).toContain('auth')
    expect(find('GET', '/admin/users').middleware).toEqual(['auth', 'role:admin'])
    expect(find('GET', '/api/v1/users/{id:int}')).toMatchObject({
      name: 'v1.users.show',
      middleware: ['throttle:60,60'],
    })
    expect(find('GET', '/api/v2/users/{id:int}')).toMatchObject({
      name: 'v2.users.show',
      middleware: [],
    })
    expect(find('GET', '/api/v1/limited').middleware).toEqual(['throttle:60,60', 'throttle:5,60'])
    for (const path of [
      '/demo/int/{id:int}',
      '/demo/slug/{slug:slug}',
      '/demo/uuid/{id:uuid}',
      '/demo/hex/{value:hex}',
      '/demo/code/{code:[A-Z]{3}}',
      '/demo/optional/{name?}',
      '/demo/files/{path:.*}',
      '/demo/url/{id:int}',
      '/demo/sign/{id:int}',
      '/demo/error/{code:int}',
      '/demo/crash',
      '/demo/attributes',
    ])
      find('GET', path)
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) find(method, '/demo/echo')
    find('POST', '/demo/resource')
    find('OPTIONS', '/demo/resource')
    expect(find('GET', '/demo/signed/{id:int}').middleware).toEqual(['verifySignedUrl'])
    expect(find('GET', '/demo/negotiate').middleware).toEqual(['negotiate'])
    find('GET', '/whoami', '{account}.localhost')
    // "Last, the catch-all fallback".
    expect(routes.at(-1)).toMatchObject({ method: 'GET', host: null, path: '/{path:.*}' })
  })
})

describe('audit 8: the tokens the example app issues', () => {
  // DESIGN: login tokens carry jti and, for users that have roles, roles; token responses carry
  // Cache-Control: no-store.
  it('answers a login with no-store and a token with jti, and roles only for a user that has some', async () => {
    const ada = await postJson('/auth/login', { email: 'ada@example.com', password: PASSWORD })
    expect(ada.status).toBe(200)
    expect(ada.headers['cache-control']).toBe('no-store')
    const { token, user } = ada.json() as { token: string; user: Record<string, unknown> }
    expect(user).toEqual({ id: expect.any(Number), email: 'ada@example.com', name: 'Ada' })
    const claims = claimsOf(token)
    expect(claims).toMatchObject({
      iss: 'framework-app',
      sub: user.id,
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
      jti: expect.stringMatching(/^[0-9a-f]{32}$/),
    })
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600)
    const bob = await postJson('/auth/login', { email: 'bob@example.com', password: PASSWORD })
    const bobClaims = claimsOf((bob.json() as { token: string }).token)
    expect(bobClaims.jti).toMatch(/^[0-9a-f]{32}$/)
    expect(bobClaims).not.toHaveProperty('roles')
    expect((await get('/admin/users', bearer(token))).status).toBe(200)
  })

  // DESIGN: tokens from /rt/auth/* and /oauth/token use the same secret and claims and are
  // accepted by /auth/me (and so by the role check, which reads the token only).
  it('issues OAuth and /rt access tokens with the claims of a login token, accepted by /auth/me and the role check', async () => {
    const login = await postJson('/auth/login', { email: 'ada@example.com', password: PASSWORD })
    const loginClaims = Object.keys(claimsOf((login.json() as { token: string }).token)).sort()
    const oauth = await postJson('/oauth/token', {
      grant_type: 'password',
      username: 'ada@example.com',
      password: PASSWORD,
    })
    const rt = await postJson('/rt/auth/login', { email: 'ada@example.com', password: PASSWORD })
    for (const answer of [oauth, rt]) {
      expect(answer.status).toBe(200)
      const token = (answer.json() as { access_token: string }).access_token
      const claims = claimsOf(token)
      expect(Object.keys(claims).sort()).toEqual(loginClaims)
      expect(claims).toMatchObject({ roles: ['admin'], email: 'ada@example.com' })
      const me = await get('/auth/me', bearer(token))
      expect([me.status, me.json().email]).toEqual([200, 'ada@example.com'])
      expect((await get('/admin/users', bearer(token))).status).toBe(200)
    }
  })

  // DESIGN: POST /auth/logout blacklists the token's jti: that token, not the user's others.
  it("revokes at logout the token presented, and leaves the user's other tokens working", async () => {
    const tokenOf = async (): Promise<string> =>
      (
        (
          await postJson('/auth/login', { email: 'bob@example.com', password: PASSWORD })
        ).json() as {
          token: string
        }
      ).token
    const [first, second] = [await tokenOf(), await tokenOf()]
    expect((await postJson('/auth/logout', {}, bearer(first))).status).toBe(204)
    const revoked = await get('/auth/me', bearer(first))
    expect([revoked.status, revoked.json().error]).toEqual([401, 'Token revoked'])
    expect((await get('/auth/me', bearer(second))).status).toBe(200)
  })
})
