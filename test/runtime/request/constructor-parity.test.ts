/**
 * Regression: fromNode, fromWeb and create() disagreed on the same input (a multipart type
 * without a body: ok, 400 or ok by constructor and method; create() had no body limits; fromWeb
 * removed dot segments from the path; create() kept the case of header names). One table, fed
 * to all three: the node request over real HTTP, written byte for byte.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import type { RequestOptions } from '../../../src/runtime/types.js'
import { MULTIPART_TYPE, multipart } from './helpers.js'

const OPTIONS: RequestOptions = { limits: { body: 64 } }

interface Case {
  name: string
  method: string
  target: string
  headers: [string, string][]
  /** Absent: the request has no body (no Content-Length); '' is a present, empty body. */
  body?: string
}

const FORM = ['Content-Type', 'application/x-www-form-urlencoded'] as [string, string]
const JSON_TYPE = ['content-type', 'application/json'] as [string, string]
const MULTIPART = ['Content-Type', MULTIPART_TYPE] as [string, string]
const FIELD = multipart([{ name: 'a', value: '1' }]).toString('latin1')

const CASES: Case[] = [
  {
    name: 'a raw path with dot segments, query, repeated headers in mixed case',
    method: 'POST',
    target: '/a/../b%7e/./c?x=1&x=2&y[]=3',
    headers: [['X-A', 'one'], ['X-A', 'two'], ['Cookie', 'a=1'], FORM],
    body: 'f=1&g[]=2',
  },
  ...['GET', 'HEAD', 'DELETE', 'POST'].map((method) => ({
    name: `${method} with a multipart type and no body: an empty body`,
    method,
    target: '/form',
    headers: [MULTIPART],
  })),
  { name: 'a multipart form', method: 'PUT', target: '/', headers: [MULTIPART], body: FIELD },
  {
    name: 'an empty multipart body: 400',
    method: 'POST',
    target: '/',
    headers: [MULTIPART],
    body: '',
  },
  {
    name: 'a truncated multipart body: 400',
    method: 'DELETE',
    target: '/',
    headers: [MULTIPART],
    body: FIELD.slice(0, -10),
  },
  {
    name: 'JSON at the body limit',
    method: 'POST',
    target: '/',
    headers: [JSON_TYPE],
    body: JSON.stringify({ a: 'x'.repeat(56) }),
  },
  {
    name: 'JSON one byte over the body limit: 413',
    method: 'POST',
    target: '/',
    headers: [JSON_TYPE],
    body: JSON.stringify({ a: 'x'.repeat(57) }),
  },
  {
    name: 'text over the body limit: 413',
    method: 'PATCH',
    target: '/',
    headers: [['Content-Type', 'text/plain']],
    body: 'x'.repeat(65),
  },
  { name: 'malformed JSON: 400', method: 'POST', target: '/', headers: [JSON_TYPE], body: '{' },
]

/** What a user sees of a request: the load's failure, or what the accessors give. */
async function describeRequest(r: FwRequest): Promise<unknown> {
  try {
    await r.loadBody()
    return JSON.parse(
      JSON.stringify({
        method: r.getMethod(),
        path: r.getPath(),
        queryString: r.getQueryString(),
        query: r.query(),
        input: r.input(),
        post: r.post(),
        json: r.json(),
        content: r.getContent(),
        files: Object.keys(r.files()),
        xa: r.getHeaderLine('x-a'),
        cookies: r.getCookieParams(),
        // Framing headers belong to the transport (a web Request has no Content-Length).
        headerNames: Object.keys(r.getHeaders())
          .filter((name) => name !== 'content-length' && name !== 'connection')
          .sort(),
      }),
    )
  } catch (error) {
    const { status, message } = error as { status?: number; message: string }
    return { status, message }
  } finally {
    await r.cleanup()
  }
}

let server: Server
let port: number

beforeAll(async () => {
  // The description travels in a header: a HEAD response has no body.
  server = createServer((req, res) => {
    void describeRequest(FwRequest.fromNode(req, OPTIONS)).then((description) => {
      res.setHeader('x-description', encodeURIComponent(JSON.stringify(description)))
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/** The case written as raw HTTP/1.1; Content-Length only when a body is present. */
function viaNode(c: Case): Promise<unknown> {
  const lines = [`${c.method} ${c.target} HTTP/1.1`, 'Host: example.test', 'Connection: close']
  for (const [name, value] of c.headers) lines.push(`${name}: ${value}`)
  if (c.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(c.body, 'latin1')}`)
  const head = `${lines.join('\r\n')}\r\n\r\n`
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.end(Buffer.concat([Buffer.from(head), Buffer.from(c.body ?? '', 'latin1')])),
    )
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    socket.on('error', reject)
    socket.on('end', () => {
      const found = /\r\nx-description: ([^\r]*)\r\n/i.exec(text)
      if (found === null) return reject(new Error(`no description in:\n${text}`))
      resolve(JSON.parse(decodeURIComponent(found[1]!)))
    })
  })
}

/**
 * A Request as a host hands it over with the URL the client sent (the target not normalised):
 * one built with `new Request(url)` has removed dot segments from its URL already.
 */
function rawUrlRequest(url: string, init: RequestInit): Request {
  const request = new Request(url, init)
  Object.defineProperty(request, 'url', { value: url })
  return request
}

function viaWeb(c: Case): Promise<unknown> {
  const headers = new Headers([['Host', 'example.test'], ...c.headers])
  const body = c.body === undefined ? undefined : Buffer.from(c.body, 'latin1')
  const web = rawUrlRequest(`http://example.test${c.target}`, {
    method: c.method,
    headers,
    body,
  })
  return describeRequest(FwRequest.fromWeb(web, OPTIONS))
}

function viaCreate(c: Case): Promise<unknown> {
  const headers: Record<string, string[]> = { Host: ['example.test'] }
  for (const [name, value] of c.headers) (headers[name] ??= []).push(value)
  const body = c.body === undefined ? undefined : Buffer.from(c.body, 'latin1')
  const init = { method: c.method, uri: c.target, headers, body }
  return describeRequest(FwRequest.create(init, OPTIONS))
}

describe('fromNode, fromWeb and create() agree', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const node = await viaNode(c)
    expect(await viaWeb(c)).toEqual(node)
    expect(await viaCreate(c)).toEqual(node)
  })

  it('gives what the table expects for the cases the constructors used to disagree on', async () => {
    const [dots, get, , del] = await Promise.all(CASES.slice(0, 4).map(viaNode))
    expect(dots).toMatchObject({
      path: '/a/../b%7e/./c',
      input: { f: '1', g: ['2'] },
      xa: 'one, two',
      headerNames: ['content-type', 'cookie', 'host', 'x-a'],
    })
    expect([get, del]).toMatchObject([
      { input: {}, files: [] },
      { input: {}, files: [] },
    ])
    const over = CASES.find((c) => c.name.startsWith('JSON one byte over'))!
    expect(await viaCreate(over)).toEqual({
      status: 413,
      message: 'Request body exceeds the limit of 64 bytes',
    })
    const empty = CASES.find((c) => c.name.startsWith('an empty multipart'))!
    expect(await viaCreate(empty)).toMatchObject({ status: 400 })
  })
})
