/**
 * The spec's route cache operations as a library: build({ cache, register }) and
 * clear({ matcher: 'sharded', cache }). fw offered them only as the CLI (and buildCache() over a
 * routes file), so a register callback could not be compiled without writing a file.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { routeCache } from '../../src/compiler/index.js'
import type { Registrar } from '../../src/define/registrar.js'
import { Kernel } from '../../src/runtime/kernel.js'
import { FwRequest } from '../../src/runtime/request/request.js'

const dir = mkdtempSync(join(tmpdir(), 'fw-route-cache-api-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const routes = (r: Registrar): void => {
  r.get('/users/{id:int}', (req: FwRequest, id: number) => ({ id }), 'users.show')
}

describe('routeCache.build({ cache, register }) and clear({ matcher, cache })', () => {
  it('compiles a routes function a kernel then boots from and answers with', async () => {
    const cache = join(dir, 'built')
    const result = await routeCache.build({ cache, register: routes })
    expect(result.written).toBe(true)
    expect(result.manifest.routeCount).toBe(1)
    const again = await routeCache.build({ cache, register: routes })
    expect(again.written).toBe(false)

    const kernel = await Kernel.boot({ routeCache: cache, register: routes, log: silent })
    const response = await kernel.handle(FwRequest.create({ uri: '/users/42' }))
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body as string)).toEqual({ id: 42 })
    expect(kernel.urlFor('users.show', { id: 7 })).toBe('/users/7')
  })

  it('clears what it built, and says what it removed', async () => {
    const cache = join(dir, 'cleared')
    await routeCache.build({ cache, register: routes })
    const removed = await routeCache.clear({ matcher: 'sharded', cache })
    expect(removed).toContain('manifest.json')
    expect(removed).toContain('router.mjs')
    expect(() => readdirSync(cache)).toThrow()
    expect(await routeCache.clear({ cache })).toEqual([])
  })

  it('removes the routes.mjs an earlier build of a routes file left', async () => {
    // That routes.mjs names the file build's generation, which later builds prune: server.mjs,
    // finding it, imported a deleted module; and it holds routes the cache no longer has.
    const cache = join(dir, 'after-file-build')
    const file = join(dir, 'routes.mjs')
    writeFileSync(file, "export default (r) => { r.get('/old', () => ({}), 'old') }\n")
    await routeCache.build({ cache, routes: file })
    expect(existsSync(join(cache, 'routes.mjs'))).toBe(true)
    await routeCache.build({ cache, register: routes })
    expect(existsSync(join(cache, 'routes.mjs'))).toBe(false)
    // A cache of an older fw may still hold one beside an up-to-date in-memory build.
    writeFileSync(join(cache, 'routes.mjs'), 'export * from "./generation-gone/routes.mjs"\n')
    expect((await routeCache.build({ cache, register: routes })).written).toBe(true)
    expect(existsSync(join(cache, 'routes.mjs'))).toBe(false)
  })

  it('refuses a call that is not one of the forms', async () => {
    await expect(routeCache.build({ routes: 'routes.ts' } as never)).rejects.toThrow(
      "routeCache.build() needs the cache folder: { cache: '.fw/cache', ... }",
    )
    await expect(routeCache.clear({} as never)).rejects.toThrow(
      "routeCache.clear() needs the cache folder: { cache: '.fw/cache', ... }",
    )
    await expect(routeCache.build({ cache: join(dir, 'x') } as never)).rejects.toThrow(
      'routeCache.build() takes either a register function or a routes file',
    )
    await expect(
      routeCache.clear({ matcher: 'linear' as 'sharded', cache: join(dir, 'x') }),
    ).rejects.toThrow(`Unknown matcher "linear": the only one is 'sharded'`)
  })
})

const silent = { debug() {}, info() {}, warn() {}, error() {} }
