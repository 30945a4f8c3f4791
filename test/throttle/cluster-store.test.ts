/**
 * `--workers N` without Redis: the primary holds the counters and the workers ask it over the
 * node:cluster IPC channel, so the limit holds for the whole server. A real cluster (2 workers on
 * one port) is spawned; a worker whose primary does not hold counters refuses to start.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCache } from '../../src/compiler/index.js'
import { cleanupProjects, makeProject } from '../support/project.js'
import { bundleServeFixture, httpGet, spawnServer } from './processes.js'
import { countOf } from './support.js'

const ROUTES = `export default (r) => {
  r.get('/five', () => ({ pid: process.pid }), { name: 'five', middleware: ['throttle:5,60'] })
}
`

let script: string
let env: Record<string, string>

beforeAll(async () => {
  const dir = makeProject({ 'routes.mjs': ROUTES })
  await buildCache({ routesFile: join(dir, 'routes.mjs'), cacheDir: join(dir, 'cache') })
  script = await bundleServeFixture()
  env = {
    ROUTES_FILE: join(dir, 'routes.mjs'),
    CACHE_DIR: join(dir, 'cache'),
    WORKERS: '2',
    REDIS_URL: '',
  }
})

afterAll(() => {
  cleanupProjects()
  if (script) rmSync(script, { force: true })
})

describe('ClusterStore across node:cluster workers', () => {
  it('2 workers on one port, 50 concurrent requests → exactly 5 pass', async () => {
    const server = await spawnServer(script, { ...env, PORT: '0' })
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => httpGet(server.port, '/five')),
      )
      expect(
        countOf(
          answers.map((a) => a.status),
          200,
        ),
      ).toBe(5)
      expect(
        countOf(
          answers.map((a) => a.status),
          429,
        ),
      ).toBe(45)
      const limited = answers.find((a) => a.status === 429)!
      expect(limited.headers['x-ratelimit-remaining']).toBe('0')
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      // Both workers answered (round-robin over fresh connections), yet only 5 got through.
      expect(new Set(answers.map((a) => a.headers['x-pid'])).size).toBe(2)
      const more = await Promise.all(
        Array.from({ length: 10 }, () => httpGet(server.port, '/five')),
      )
      expect(
        countOf(
          more.map((a) => a.status),
          200,
        ),
      ).toBe(0)
    } finally {
      await server.stop()
    }
  })

  it('reports the shared count in the headers of either worker', async () => {
    const server = await spawnServer(script, { ...env, PORT: '0' })
    try {
      const remaining: unknown[] = []
      for (let i = 0; i < 5; i++)
        remaining.push((await httpGet(server.port, '/five')).headers['x-ratelimit-remaining'])
      expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    } finally {
      await server.stop()
    }
  })

  it('refuses to start a worker when the primary holds no counters and there is no Redis', async () => {
    const server = await spawnServer(script, {
      ...env,
      PORT: '0',
      NO_THROTTLE_PRIMARY: '1',
    })
    await server.stop()
    expect(server.refused).toMatch(/set REDIS_URL, or call setupThrottlePrimary\(\)/)
  })
})
