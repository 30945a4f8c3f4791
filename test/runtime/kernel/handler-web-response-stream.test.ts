/**
 * Handlers may return a WHATWG `Response` (its status, headers and body) or a web
 * `ReadableStream` (streamed like a Node Readable); both used to become 200 `{}`. Other objects
 * keep JSON.stringify's behaviour (a Map is `{}`), as in Fastify.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

afterAll(cleanupTempDirs)

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const routes = (r: any): void => {
  r.get(
    '/web-response',
    () =>
      new Response('created!', {
        status: 201,
        headers: [
          ['content-type', 'text/x-custom'],
          ['x-from', 'fetch'],
          ['set-cookie', 'a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT'],
          ['set-cookie', 'b=2'],
        ],
      }),
  )
  r.get('/web-empty', () => new Response(null, { status: 204, headers: { 'x-empty': 'yes' } }))
  r.get('/web-json', async () => Response.json({ ok: true }, { status: 202 }))
  r.get(
    '/web-stream',
    () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('hello, '))
          controller.enqueue(new TextEncoder().encode('stream'))
          controller.close()
        },
      }),
  )
  r.get('/map', () => new Map([['a', 1]]))
  r.get('/instance', () => {
    class Point {
      x = 1
      y = 2
    }
    return new Point()
  })
}

describe('a handler returning web platform objects', () => {
  it('answers a web Response with its status, headers and body', async () => {
    served = await serve(await bootKernel(routes))
    const reply = await served.send('GET', '/web-response')
    expect(reply.status).toBe(201)
    expect(reply.headers['content-type']).toBe('text/x-custom')
    expect(reply.headers['x-from']).toBe('fetch')
    expect(reply.headers['set-cookie']).toEqual([
      'a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT',
      'b=2',
    ])
    expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(reply.text).toBe('created!')

    const empty = await served.send('GET', '/web-empty')
    expect({ status: empty.status, header: empty.headers['x-empty'], text: empty.text }).toEqual({
      status: 204,
      header: 'yes',
      text: '',
    })

    const fromJson = await served.send('GET', '/web-json')
    expect(fromJson.status).toBe(202)
    expect(fromJson.headers['content-type']).toBe('application/json')
    expect(JSON.parse(fromJson.text)).toEqual({ ok: true })
  })

  it('streams a web ReadableStream like a Node Readable', async () => {
    served = await serve(await bootKernel(routes))
    const reply = await served.send('GET', '/web-stream')
    expect(reply.status).toBe(200)
    expect(reply.headers['content-type']).toBe('application/octet-stream')
    expect(reply.headers['transfer-encoding']).toBe('chunked')
    expect(reply.text).toBe('hello, stream')
  })

  it('keeps JSON.stringify behaviour for other objects (a Map is {})', async () => {
    served = await serve(await bootKernel(routes))
    expect((await served.send('GET', '/map')).text).toBe('{}')
    expect(JSON.parse((await served.send('GET', '/instance')).text)).toEqual({ x: 1, y: 2 })
  })
})
