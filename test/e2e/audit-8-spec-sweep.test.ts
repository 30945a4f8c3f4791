/**
 * Audit 8, a sweep of the spec's request-object rows against a real kernel over HTTP: the rows the
 * conformance tests leave unasserted. A key that holds dots (`utm.source`, a form field named
 * `user.name`) is listed by query()/input() and must be readable by its name too; PSR-7's
 * withUri(uri, preserveHost) takes the URI's host when the Host header is empty; input() parses a
 * body for any method, GET and DELETE included; headers keep their repeated fields.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FwRequest } from '../../src/runtime/request/request.js'
import { json } from '../../src/runtime/response.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from '../runtime/kernel/support.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const JSON_TYPE = { 'content-type': 'application/json' }

let served: Served

beforeAll(async () => {
  const kernel = await bootKernel((r) => {
    r.post('/dotted', (req: FwRequest) =>
      json({
        source: req.query('utm.source'),
        sourceOfKeys: req.query(['utm.source', 'missing']),
        name: req.input('user.name'),
        age: req.input('user.age'),
        has: req.has(['user.name', 'user.age']),
        filled: req.filled('user.name'),
        only: req.only('user.name'),
        except: req.except('user.name'),
        post: req.post('user.name'),
      }),
    )
    for (const verb of ['get', 'delete'] as const)
      r[verb]('/any-method', (req: FwRequest) =>
        json({ method: req.getMethod(), input: req.input(), city: req.input('user.city') }),
      )
    r.get('/headers', (req: FwRequest) =>
      json({
        values: req.getHeader('X-Tag'),
        line: req.getHeaderLine('x-TAG'),
        has: req.hasHeader('X-TAG'),
        listed: req.getHeaders()['x-tag'],
      }),
    )
  })
  served = await serve(kernel)
})

afterAll(async () => {
  await served?.close()
  cleanupTempDirs()
})

describe('audit-8 sweep: request accessors', () => {
  // Spec "Query": query(key, default) and "Body": input(key, default) read what query()/input()
  // list; rule 2 adds dotted paths for nested fields. A key that itself holds a dot was listed
  // but read as a path, so query('utm.source') was null and has('user.name') false for a posted
  // field named so (HTML forms of Spring or ASP.NET style post such names). Read as it is first,
  // as cookie() and Laravel's Arr::get do; a dotted path reads nested values otherwise.
  it('reads a query or form key that holds dots by its name, and nested keys by their path', async () => {
    const answer = await served.send('POST', '/dotted?utm.source=news', {
      headers: FORM,
      body: 'user.name=Ada&user[age]=36',
    })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.text)).toEqual({
      source: 'news',
      sourceOfKeys: { 'utm.source': 'news', missing: null },
      name: 'Ada',
      age: '36',
      has: true,
      filled: true,
      only: { 'user.name': 'Ada' },
      except: { user: { age: '36' } },
      post: 'Ada',
    })
  })

  // PSR-7 withUri(): "If the Host header is missing or empty, and the new URI contains a host
  // component, this method MUST update the Host header" even when preserving it. An empty Host
  // was kept, and the copy's getUri() then failed with a 400 "Invalid Host header".
  it('takes the host of the URI in withUri(uri, true) when the Host header is empty', () => {
    const empty = FwRequest.create({ uri: '/a', headers: { host: '' } })
    const moved = empty.withUri('https://example.com:8443/b?c=1', true)
    expect(moved.getHeaderLine('host')).toBe('example.com:8443')
    expect(moved.getUri()).toBe('https://example.com:8443/b?c=1')
    expect(empty.getHeaderLine('host')).toBe('')
    // A Host that is there is preserved, as before.
    const kept = FwRequest.create({ uri: '/a', headers: { host: 'keep.test' } })
    expect(kept.withUri('https://example.com/b', true).getHeaderLine('host')).toBe('keep.test')
  })

  // Spec rule 1: "input() parses the body by Content-Type ... for any HTTP method".
  it('parses a JSON body on GET and a urlencoded body on DELETE over the wire', async () => {
    const body = JSON.stringify({ user: { city: 'Paris' } })
    const got = await served.send('GET', '/any-method', {
      headers: { ...JSON_TYPE, 'content-length': String(Buffer.byteLength(body)) },
      body,
    })
    expect(JSON.parse(got.text)).toEqual({ method: 'GET', input: JSON.parse(body), city: 'Paris' })
    const form = 'user[city]=Rome&x=1'
    const deleted = await served.send('DELETE', '/any-method', {
      headers: { ...FORM, 'content-length': String(form.length) },
      body: form,
    })
    expect(JSON.parse(deleted.text)).toEqual({
      method: 'DELETE',
      input: { user: { city: 'Rome' }, x: '1' },
      city: 'Rome',
    })
  })

  // Spec "Headers": getHeader returns the list of values, getHeaderLine joins them, names are
  // case-insensitive; a field sent twice on the wire keeps both values.
  it('lists a header field sent twice as two values, joined by getHeaderLine', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: served.port,
          path: '/headers',
          agent: false,
          headers: ['Host', 'localhost', 'X-Tag', 'a', 'x-tag', 'b, c'],
        },
        (res) => {
          let text = ''
          res.on('data', (chunk: Buffer) => (text += chunk))
          res.on('end', () => resolve(text))
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(JSON.parse(answer)).toEqual({
      values: ['a', 'b, c'],
      line: 'a, b, c',
      has: true,
      listed: ['a', 'b, c'],
    })
  })
})
