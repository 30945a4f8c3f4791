/**
 * Regression tests from an API audit of the request object (session 19):
 * - `has('name', 'email')` and `filled('a', 'b')` checked the first key only: the others, given
 *   as separate arguments as in Laravel, were silently ignored;
 * - `create({ uri: 'https://a.com/x', headers: { host: 'b.com' } })` and a web Request for
 *   `http://a.com/x` sent with `Host: b.com` named the host b.com, where the node path takes the
 *   host of an absolute-form target over Host (RFC 9112 §3.2.2);
 * - `withHeader('X-Count', 5)` from JS failed with "value is not iterable";
 * - `withBody(json).withHeader('content-type', 'application/json')` read as `{}`: the body was
 *   parsed by the Content-Type the request had when withBody ran, not when it was read.
 */
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { rawExchange } from '../../support/raw-http.js'
import { MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve } = useServers()

const JSON_TYPE = { 'content-type': 'application/json' }

describe('has() and filled() with several keys', () => {
  const request = FwRequest.create({
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ name: 'Ada', email: '', address: { city: null } }),
  })

  it('are true only when every key given as an argument is present (filled)', () => {
    expect(request.has('name', 'email')).toBe(true)
    expect(request.has('name', 'phone')).toBe(false)
    expect(request.has('name', 'address.city')).toBe(true)
    expect(request.filled('name', 'email')).toBe(false)
    expect(request.filled('name', 'address.city')).toBe(false)
    expect(request.filled('name')).toBe(true)
    // A list, alone or among other arguments, still counts each key.
    expect(request.has(['name', 'phone'])).toBe(false)
    expect(request.has('name', ['email', 'address'])).toBe(true)
    expect(request.filled(['name'], 'email')).toBe(false)
    expect(request.hasAll(['name', 'email'])).toBe(true)
  })
})

describe('an absolute URI names the host before a Host header, in every constructor', () => {
  const report = (r: FwRequest) => ({
    uri: r.getUri(),
    scheme: r.getScheme(),
    host: r.getHost(),
    port: r.getPort(),
    hostHeader: r.getHeaderLine('host'),
  })

  it('create() takes scheme, host and port from an absolute uri, whatever Host says', () => {
    const r = FwRequest.create({ uri: 'https://a.com/x?y=1', headers: { host: 'b.com' } })
    expect(report(r)).toEqual({
      uri: 'https://a.com/x?y=1',
      scheme: 'https',
      host: 'a.com',
      port: 443,
      hostHeader: 'b.com',
    })
    const withPort = FwRequest.create({ uri: 'http://A.com:8080/x', headers: { host: 'b.com' } })
    expect(withPort.getSchemeAndHttpHost()).toBe('http://a.com:8080')
    // A new target replaces the URI, as it replaces an absolute-form one: Host names the host.
    expect(r.withUri('/z').getUri()).toBe('https://b.com/z')
  })

  it('fromWeb() takes the host of the Request URL, whatever Host says', () => {
    const web = new Request('http://a.com:81/x', { headers: { host: 'b.com' } })
    expect(report(FwRequest.fromWeb(web))).toEqual({
      uri: 'http://a.com:81/x',
      scheme: 'http',
      host: 'a.com',
      port: 81,
      hostHeader: 'b.com',
    })
  })

  it('gives what the node path gives for `GET http://other:81/abs` with `Host: h`', async () => {
    const { port } = await serve({}, report)
    const reply = await rawExchange(port, ['GET http://other:81/abs HTTP/1.0', 'Host: h'])
    const node = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))
    expect(node).toEqual({
      uri: 'http://other:81/abs',
      scheme: 'http',
      host: 'other',
      port: 81,
      hostHeader: 'h',
    })
    const init = { headers: { host: 'h' } }
    expect(report(FwRequest.create({ uri: 'http://other:81/abs', ...init }))).toEqual(node)
    expect(report(FwRequest.fromWeb(new Request('http://other:81/abs', init)))).toEqual(node)
  })
})

describe('a header value given as a number', () => {
  const request = FwRequest.create()

  it('is written as its decimal string by withHeader and withAddedHeader', () => {
    const r = request.withHeader('X-Count', 5).withAddedHeader('x-count', 1.5)
    expect(r.getHeader('x-count')).toEqual(['5', '1.5'])
    expect(request.withAddedHeader('Content-Length', 0).getHeaderLine('content-length')).toBe('0')
  })

  it('is a TypeError naming the header when it is not finite, as is any other non-string', () => {
    const message = /^Header X-Count takes a string, a finite number or a list of strings, not /
    const values: unknown[] = [NaN, Infinity, null, undefined, {}, true, [1], ['a', null]]
    for (const value of values) {
      expect(() => request.withHeader('X-Count', value as string)).toThrow(TypeError)
      expect(() => request.withHeader('X-Count', value as string)).toThrow(message)
      expect(() => request.withAddedHeader('X-Count', value as string)).toThrow(message)
    }
    expect(() => request.withHeader('X-Count', NaN)).toThrow(/, not NaN$/)
  })
})

describe('a body is parsed by the Content-Type the request has when it is read', () => {
  const json = JSON.stringify({ a: 1 })

  it('a Content-Type set after withBody() decides how the body reads', () => {
    const r = FwRequest.create({ method: 'POST' }).withBody(json)
    expect(r.input()).toEqual({})
    expect(r.withHeader('content-type', 'application/json').input()).toEqual({ a: 1 })
    const form = r
      .withBody('b=2')
      .withAddedHeader('Content-Type', 'application/x-www-form-urlencoded')
    expect([form.input(), form.post()]).toEqual([{ b: '2' }, { b: '2' }])
  })

  it("create()'s body follows a changed or removed Content-Type; the original keeps its own", () => {
    const r = FwRequest.create({ method: 'POST', headers: JSON_TYPE, body: json })
    expect(r.withHeader('content-type', 'text/plain').input()).toEqual({})
    expect(r.withoutHeader('content-type').json()).toBeNull()
    expect(r.withHeader('content-type', 'application/json; charset=latin1').input).toThrow()
    expect(r.input()).toEqual({ a: 1 })
    // A parsed body given by withParsedBody() stays what it was given.
    const parsed = r.withParsedBody({ b: 2 }).withHeader('content-type', 'text/plain')
    expect(parsed.input()).toEqual({ b: 2 })
  })

  it('multipart content given before its Content-Type is parsed as a form when loaded', async () => {
    const body = multipart([{ name: 'a', value: '1' }])
    const r = FwRequest.create({ method: 'POST' })
      .withBody(body)
      .withHeader('Content-Type', MULTIPART_TYPE)
    await r.loadBody()
    expect(r.input()).toEqual({ a: '1' })
    await r.cleanup()
  })

  it('a request from node given new content and then its type reads the new content', async () => {
    const { port } = await serve({}, (r) => ({
      wire: r.input(),
      replaced: r.withBody(json).withHeader('content-type', 'application/json').input(),
    }))
    const headers = { 'content-type': 'application/x-www-form-urlencoded' }
    const res = await send(port, { headers, body: 'b=2' })
    expect(res).toEqual({ status: 200, body: { wire: { b: '2' }, replaced: { a: 1 } } })
  })
})
