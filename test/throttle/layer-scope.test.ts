/**
 * Which requests share a throttle layer's counter: group layers one counter per group, route
 * layers one per route, pre/post-global layers one for everything.
 */
import { describe, expect, it } from 'vitest'
import { collectRoutes, type Registrar } from '../../src/define/registrar.js'
import type { RouteRecord } from '../../src/shared/route-record.js'
import type { KernelServices } from '../../src/runtime/types.js'
import { layerScope, type LayerSite } from '../../src/throttle/layer-scope.js'

const ok = (): string => 'ok'

/** A kernel whose router matches by exact method and path over `register`'s records. */
function kernelFor(
  register: (r: Registrar) => void,
  annotate?: (record: RouteRecord) => number[],
): KernelServices {
  const records = collectRoutes(register).routes
  if (annotate)
    for (const record of records) Object.assign(record, { middlewareScopes: annotate(record) })
  const match = (method: string, path: string) => {
    const record = records.find((r) => r.method === method && r.path === path)
    return record ? { route: { id: record.id } } : { status: 404 }
  }
  return { router: { records, match } } as unknown as KernelServices
}

const at = (path: string, index: number, routed = true): LayerSite => ({
  routed,
  method: 'GET',
  path,
  host: 'localhost',
  index,
})

describe('layerScope', () => {
  it('gives a group limit one counter for all its routes and a route limit its own', () => {
    const kernel = kernelFor((r) => {
      r.group({ prefix: '/g', name: 'g.', middleware: ['throttle:10,60'] }, (r) => {
        r.get('/a', ok, 'a').withMiddleware('throttle:3,60')
        r.get('/b', ok, 'b')
        r.get('/c', ok)
      })
    })
    expect(layerScope(kernel, 'throttle', at('/g/a', 0))).toBe('g1.0')
    expect(layerScope(kernel, 'throttle', at('/g/b', 0))).toBe('g1.0')
    expect(layerScope(kernel, 'throttle', at('/g/c', 0))).toBe('g1.0')
    expect(layerScope(kernel, 'throttle', at('/g/a', 1))).toBe('r1:g.a')
  })

  it('attributes a limit to the outermost group that has it, through nested groups', () => {
    const kernel = kernelFor((r) => {
      r.group({ prefix: '/v1', middleware: ['auth', 'throttle:60,60'] }, (r) => {
        r.get('/x', ok, 'x')
        r.group({ prefix: '/admin', middleware: ['throttle:5,60'] }, (r) => {
          r.get('/y', ok, 'y')
          r.get('/z', ok, 'z').withMiddleware(['throttle:1,60'])
        })
      })
    })
    expect(layerScope(kernel, 'throttle', at('/v1/x', 0))).toBe('g1.1')
    expect(layerScope(kernel, 'throttle', at('/v1/admin/y', 0))).toBe('g1.1')
    expect(layerScope(kernel, 'throttle', at('/v1/admin/y', 1))).toBe('g2.2')
    expect(layerScope(kernel, 'throttle', at('/v1/admin/z', 1))).toBe('g2.2')
    expect(layerScope(kernel, 'throttle', at('/v1/admin/z', 2))).toBe('r3:z')
  })

  it('keeps route limits of different routes apart, named or not', () => {
    const kernel = kernelFor((r) => {
      r.get('/one', ok, { name: 'one', middleware: ['throttle:5,60'] })
      r.get('/two', ok, { middleware: ['throttle:5,60'] })
      r.group({ prefix: '/g' }, (r) => {
        r.get('/p', ok, { middleware: ['throttle:5,60'] })
        r.get('/q', ok, { middleware: ['auth', 'throttle:5,60'] })
      })
    })
    expect(layerScope(kernel, 'throttle', at('/one', 0))).toBe('r0:one')
    expect(layerScope(kernel, 'throttle', at('/two', 0))).toBe('r0:GET /two')
    expect(layerScope(kernel, 'throttle', at('/g/p', 0))).toBe('r0:GET /g/p')
    expect(layerScope(kernel, 'throttle', at('/g/q', 0))).toBe('r1:GET /g/q')
  })

  it('names pre-global and post-global layers by position', () => {
    const kernel = kernelFor((r) => r.get('/x', ok, { name: 'x', middleware: ['throttle:5,60'] }))
    expect(layerScope(kernel, 'throttle', at('/x', 0, false))).toBe('pre0')
    expect(layerScope(kernel, 'throttle', at('/x', 1, false))).toBe('pre1')
    expect(layerScope(kernel, 'throttle', at('/x', 1))).toBe('post0')
  })

  it('keeps route limits per route even when every route of a group repeats them (scopes are recorded)', () => {
    const routes = (r: Registrar): void => {
      r.group({ prefix: '/g' }, (r) => {
        r.get('/p', ok, { name: 'p', middleware: ['throttle:5,60'] })
        r.get('/q', ok, { name: 'q', middleware: ['throttle:5,60'] })
      })
    }
    expect(layerScope(kernelFor(routes), 'throttle', at('/g/p', 0))).toBe('r0:p')
    expect(layerScope(kernelFor(routes), 'throttle', at('/g/q', 0))).toBe('r0:q')
    // The same with the scopes given explicitly, and the group's when it did add them.
    const exact = kernelFor(routes, (record) => record.middleware.map(() => -1))
    expect(layerScope(exact, 'throttle', at('/g/p', 0))).toBe('r0:p')
    expect(layerScope(exact, 'throttle', at('/g/q', 0))).toBe('r0:q')
    const fromGroup = kernelFor(routes, (record) => record.middleware.map(() => 1))
    expect(layerScope(fromGroup, 'throttle', at('/g/q', 0))).toBe('g1.0')
  })

  it('falls back to one counter per route when the kernel exposes no route table', () => {
    expect(layerScope({} as KernelServices, 'throttle', at('/x', 0))).toBe('r0:GET localhost/x')
  })
})
