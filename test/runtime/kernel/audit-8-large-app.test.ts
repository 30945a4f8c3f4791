/**
 * Audit 8: the runtime with a large application (many routes, middleware and controllers).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Container } from '../../../src/runtime/container.js'
import { bootKernel, captureLogger, cleanupTempDirs } from './support.js'

afterAll(cleanupTempDirs)

describe('Kernel.boot with many routes', () => {
  it("warns once per unbound 'Key@method' key, not once per route (a large app got a line per route)", async () => {
    const log = captureLogger()
    const container = new Container().set('bound', { show: () => 'ok' })
    await bootKernel(
      (r) => {
        for (let i = 0; i < 200; i++) {
          r.get(`/c${i % 4}/items${i}/{id}`, `Ctl${i % 4}@show`, `c${i % 4}.items${i}`)
          r.get(`/bound/items${i}`, 'bound@show')
        }
        r.get('/typo', 'boud@show')
      },
      { container, log },
    )
    const warnings = log.lines.filter((line) => line.level === 'warn')
    expect(warnings).toEqual([
      ...[0, 1, 2, 3].map((k) =>
        expect.objectContaining({
          obj: { route: `c${k}.items${k}`, handler: `Ctl${k}@show`, routes: 50 },
          msg: `Nothing is bound to "Ctl${k}" in the container: its 50 routes answer 500 until something is`,
        }),
      ),
      expect.objectContaining({
        obj: { route: 'GET /typo', handler: 'boud@show' },
        msg: 'Nothing is bound to "boud" in the container: the route answers 500 until something is',
      }),
    ])
  })
})
