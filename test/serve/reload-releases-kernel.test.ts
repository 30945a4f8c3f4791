/**
 * What a `fw serve --watch` reload leaves behind: the generation's modules (Node never unloads an
 * ES module), not the replaced kernel. Once the server swapped in the new one and the requests of
 * the old one are answered, nothing holds the old kernel or its router (a guard: a listener, a
 * cache or a closure keeping them would keep every generation's matcher tables and pipeline).
 */
import { get } from 'node:http'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { buildRouter } from '../../src/compiler/build.js'
import { writeCache } from '../../src/compiler/write-cache.js'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import { Kernel } from '../../src/runtime/kernel.js'
import { silentLogger } from '../../src/runtime/logger.js'
import { startServer, type RunningServer } from '../../src/serve/server.js'
import { cleanupTempDirs, tempDir } from '../support/compile.js'

afterAll(cleanupTempDirs)

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

const routes =
  (version: number) =>
  (r: Registrar): void => {
    r.get('/version', () => ({ version }), 'version')
    r.group({ middleware: ['throttle:100,60'] }, (r) => r.get('/limited', () => ({ version })))
  }

async function boot(cache: string, version: number): Promise<Kernel> {
  const register = routes(version)
  const registrar = collectRoutes(register)
  await writeCache(cache, buildRouter(registrar.routes, { aliases: registrar.aliases }))
  return Kernel.boot({ routeCache: cache, register, log: silentLogger, env: 'test' })
}

function getJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve(JSON.parse(text)))
    }).on('error', reject)
  })
}

/** Serves version 1, swaps in version 2; weak references to version 1's kernel and router. */
async function swapped(cache: string): Promise<{ server: RunningServer; old: WeakRef<object>[] }> {
  const first = await boot(cache, 1)
  const server = await startServer(first, { port: 0, host: '127.0.0.1' })
  expect(await getJson(`${server.url}/limited`)).toEqual({ version: 1 })
  server.swap(await boot(cache, 2))
  return { server, old: [new WeakRef(first), new WeakRef(first.router)] }
}

describe('a reload of the routes (the kernel swap of fw serve --watch)', () => {
  it('lets the replaced kernel and its router be collected', async () => {
    const { server, old } = await swapped(join(tempDir(), 'cache'))
    try {
      expect(await getJson(`${server.url}/limited`)).toEqual({ version: 2 })
      for (let i = 0; i < 5 && old.some((ref) => ref.deref() !== undefined); i++) {
        await new Promise((resolve) => setImmediate(resolve))
        collect()
      }
      expect(old.map((ref) => ref.deref() === undefined)).toEqual([true, true])
    } finally {
      await server.close()
    }
  })
})
