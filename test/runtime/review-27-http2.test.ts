/**
 * node:http2 through attachKernel: CONNECT arrives as a 'connect' event with the stream's
 * response, not a socket, and answerConnect wrote the bytes of an HTTP/1.1 501 into it: the
 * client got a 200 whose body was a raw HTTP/1.1 response.
 */
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../src/runtime/kernel.js'
import { attachKernel } from '../../src/runtime/node-adapter.js'
import type { FwRequest } from '../../src/runtime/request/request.js'
import { create, json, stream } from '../../src/runtime/response.js'
import { bootKernel, cleanupTempDirs, type Register } from './kernel/support.js'

const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers.splice(0)) await close()
  cleanupTempDirs()
})

const routes: Register = (r) => {
  r.get('/where', (req: FwRequest) => json({ host: req.getHost() }))
  r.get('/cookies', () => create('two', 200, { 'set-cookie': ['a=1', 'b=2'] }))
  r.get('/stream', () => stream(Readable.from(['a', 'b']), 200, { 'content-type': 'text/plain' }))
  r.get('/stream-len', () => stream(Readable.from(['ab']), 200, { 'content-length': '2' }))
  r.get('/crash', () => {
    throw new Error('boom')
  })
}

async function serveH2(kernel: Kernel): Promise<string> {
  const server = http2.createServer()
  attachKernel(server, () => kernel)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

interface Reply {
  status: number
  headers: http2.IncomingHttpHeaders
  text: string
}

function h2(origin: string, headers: http2.OutgoingHttpHeaders, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(origin)
    client.on('error', reject)
    const req = client.request(headers, { endStream: body === undefined })
    let text = ''
    let head: http2.IncomingHttpHeaders = {}
    req.on('response', (h) => (head = h))
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    req.on('end', () => {
      client.close()
      resolve({ status: Number(head[':status']), headers: head, text })
    })
    req.on('error', (error) => {
      client.close()
      reject(error)
    })
    if (body !== undefined) req.end(body)
  })
}

describe('node:http2 through attachKernel', () => {
  it('answers CONNECT with the 501 JSON error, not a 200 carrying an HTTP/1.1 response', async () => {
    const at = await serveH2(await bootKernel(routes))
    const answer = await h2(at, { ':method': 'CONNECT', ':authority': 'example.com:443' })
    expect(answer.status).toBe(501)
    expect(JSON.parse(answer.text)).toEqual({ error: 'Not Implemented', code: 501 })
    expect(answer.headers['cache-control']).toBe('no-store')
  })

  it('still serves the connection after a CONNECT on one of its streams', async () => {
    const at = await serveH2(await bootKernel(routes))
    const client = http2.connect(at)
    const connect = client.request({ ':method': 'CONNECT', ':authority': 'example.com:443' })
    const status = await new Promise((resolve) =>
      connect.on('response', (h) => resolve(h[':status'])),
    )
    connect.resume()
    const req = client.request({ ':path': '/where', ':authority': 'a.example' })
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    await new Promise((resolve) => req.on('end', resolve))
    client.close()
    expect([status, text]).toEqual([501, '{"host":"a.example"}'])
  })

  it('answers HEAD without a body (buffered, streamed and the 500)', async () => {
    const at = await serveH2(await bootKernel(routes))
    for (const path of ['/where', '/stream', '/stream-len', '/crash']) {
      const answer = await h2(at, { ':method': 'HEAD', ':path': path })
      expect(answer.text).toBe('')
    }
  })

  it('sends every value of a header given as a list (Set-Cookie)', async () => {
    const at = await serveH2(await bootKernel(routes))
    const answer = await h2(at, { ':path': '/cookies' })
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2'])
  })
})
