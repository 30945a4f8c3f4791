/**
 * A file the handler answered with but a middleware dropped after next() (it threw, or answered
 * something else): the file's descriptor stayed open until garbage collection closed it, with a
 * DEP0137 warning per request. Now the request closes a streamed body it did not send once the
 * response is done, and leaves one it sent alone.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import { json } from '../../../src/runtime/response.js'
import type { Middleware } from '../../../src/runtime/types.js'
import { bootKernel, cleanupTempDirs, serve } from './support.js'
import { tempDir } from '../../support/compile.js'

afterAll(cleanupTempDirs)

const throwsAfter: Middleware = async (request, next) => {
  await next(request)
  throw new Error('failed after the handler')
}
const replacesAfter: Middleware = async (request, next) => {
  await next(request)
  return json({ replaced: true })
}

/** Waits until `body` is destroyed (false if it is still open after a second). */
async function closedSoon(body: Readable): Promise<boolean> {
  for (let i = 0; i < 100 && !body.destroyed; i++) await delay(10)
  return body.destroyed
}

describe('a streamed body dropped by a middleware after next()', () => {
  const path = join(tempDir('fw-dropped-body-'), 'report.txt')
  writeFileSync(path, 'x'.repeat(100_000))
  const bodies: Readable[] = []
  const handler = async () => {
    const response = await file(path)
    bodies.push(response.body as Readable)
    return response
  }
  const routes = bootKernel((r) => {
    r.get('/throws', handler, { middleware: [throwsAfter] })
    r.get('/replaced', handler, { middleware: [replacesAfter] })
    r.get('/sent', handler)
  })

  it('is closed once the error answer is sent', async () => {
    const server = await serve(await routes)
    try {
      const reply = await server.send('GET', '/throws')
      expect(reply.status).toBe(500)
      expect(await closedSoon(bodies.at(-1)!)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it('is closed once the answer that replaced it is sent', async () => {
    const server = await serve(await routes)
    try {
      const reply = await server.send('GET', '/replaced')
      expect(JSON.parse(reply.text)).toEqual({ replaced: true })
      expect(await closedSoon(bodies.at(-1)!)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it('is sent whole when nothing drops it', async () => {
    const server = await serve(await routes)
    try {
      const reply = await server.send('GET', '/sent')
      expect(reply.status).toBe(200)
      expect(reply.text).toBe('x'.repeat(100_000))
      expect(bodies.at(-1)!.readableEnded).toBe(true)
    } finally {
      await server.close()
    }
  })
})
