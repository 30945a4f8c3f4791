/**
 * Regression: input(), query() and json() returned shallow copies, so `d.input().user.role =
 * 'admin'` changed the immutable request and every copy of it. Accessors now return deep copies
 * of objects and arrays (uploaded files stay the same objects).
 */
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'

const BODY = { user: { role: 'user', tags: ['a'], address: { city: 'Oslo' } }, list: [{ n: 1 }] }

function jsonRequest(): FwRequest {
  return FwRequest.create({
    method: 'POST',
    uri: '/a?q[x]=1&q[list][]=2',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BODY),
  })
}

/** Everything the request says about its input, as plain data. */
function snapshot(r: FwRequest): unknown {
  return JSON.parse(
    JSON.stringify({
      input: r.input(),
      json: r.json(),
      query: r.query(),
      queryParams: r.getQueryParams(),
      parsed: r.getParsedBody(),
    }),
  )
}

type Mutation = [string, (r: FwRequest) => void]

// Each reads a value through one accessor and changes something nested in it.
const MUTATIONS: Mutation[] = [
  ['input()', (r) => ((r.input() as any).user.role = 'admin')],
  ['input() array', (r) => (r.input() as any).user.tags.push('injected')],
  ['input(key) object', (r) => ((r.input('user') as any).address.city = 'Rome')],
  ['input(key) array', (r) => (r.input('user.tags') as string[]).push('injected')],
  ['input(key) array of objects', (r) => ((r.input('list') as any)[0].n = 99)],
  ['json()', (r) => ((r.json() as any).user.extra = 1)],
  ['json(key)', (r) => ((r.json('user') as any).role = 'admin')],
  ['query()', (r) => ((r.query() as any).q.x = 'changed')],
  ['query(key)', (r) => (r.query('q.list') as string[]).push('3')],
  ['query(keys)', (r) => ((r.query(['q']) as any).q.x = 'changed')],
  ['getQueryParams()', (r) => ((r.getQueryParams() as any).q.x = 'changed')],
  ['getParsedBody()', (r) => ((r.getParsedBody() as any).user.role = 'admin')],
  ['only()', (r) => ((r.only('user') as any).user.address.city = 'Rome')],
  ['only(dotted)', (r) => (r.only('user.tags') as any).user.tags.push('injected')],
  ['except()', (r) => ((r.except('list') as any).user.role = 'admin')],
  ['except(dotted)', (r) => (r.except('user.role') as any).user.tags.push('injected')],
]

describe('accessors return deep copies', () => {
  // The first whole-body read hands over the parsed value itself (no copy); the request then
  // parses its content again for every later read.
  it.each(MUTATIONS)(
    'changing what %s returns on the first read leaves the request as it was',
    (_name, mutate) => {
      const r = jsonRequest()
      const copy = r.withAttribute('copy', 1)
      mutate(r)
      const pristine = snapshot(jsonRequest())
      expect(snapshot(r)).toEqual(pristine)
      expect(snapshot(copy)).toEqual(pristine)
      expect(r.input('user.role')).toBe('user')
      expect(r.input()).not.toBe(r.input())
    },
  )

  it.each(MUTATIONS)(
    'changing what %s returns leaves the request and its copies as they were',
    (_name, mutate) => {
      const r = jsonRequest()
      const before = r.withAttribute('before', 1)
      const expected = snapshot(r)
      mutate(r.withHeader('x-derived', '1'))
      mutate(r)
      const after = r.withAttribute('after', 1)
      for (const request of [r, before, after]) expect(snapshot(request)).toEqual(expected)
      expect(r.input('user.role')).toBe('user')
    },
  )

  it('copies form input and post() too, and keeps the null-prototype kind', () => {
    const r = FwRequest.create({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'user[role]=user&tags[]=a',
    })
    ;(r.post() as any).user.role = 'admin'
    ;(r.input() as any).tags.push('b')
    ;(r.post('tags') as string[]).push('c')
    expect(r.input()).toEqual({ user: { role: 'user' }, tags: ['a'] })
    expect(Object.getPrototypeOf(r.input('user'))).toBeNull()
    expect(Object.getPrototypeOf(jsonRequest().input('user'))).toBe(Object.prototype)
  })

  it('keeps data given to create() and with*() apart from the caller’s objects', () => {
    const post = { user: { role: 'user' } }
    const query = { q: { x: '1' } }
    const r = FwRequest.create({ method: 'POST', post, query })
    const parsed = { user: { role: 'user' } }
    const derived = r.withParsedBody(parsed).withQueryParams(query)
    post.user.role = 'admin'
    parsed.user.role = 'admin'
    query.q.x = 'changed'
    expect([r.input('user.role'), derived.input('user.role')]).toEqual(['user', 'user'])
    expect([r.query('q.x'), derived.query('q.x')]).toEqual(['1', '1'])
  })

  it('keeps uploaded files by reference, in new lists', () => {
    const one = new UploadedFile({ path: '/tmp/one', size: 1 })
    const two = new UploadedFile({ path: '/tmp/two', size: 2 })
    const r = FwRequest.create({ method: 'POST', files: { docs: [one, two], avatar: one } })
    ;(r.file('docs') as UploadedFile[]).push(one)
    expect(r.file('docs')).toEqual([one, two])
    ;(r.files().docs as UploadedFile[]).length = 0
    expect(r.file('docs')).toEqual([one, two])
    expect((r.file('docs') as UploadedFile[])[0]).toBe(one)
    expect(r.file('avatar')).toBe(one)
  })

  it('copies a value given by hand that shares or contains itself', () => {
    const shared = { n: 1 }
    const cyclic: Record<string, unknown> = { a: shared, b: shared }
    cyclic.self = cyclic
    const input = FwRequest.create().withParsedBody(cyclic).input() as any
    expect(input.a).not.toBe(shared)
    expect(input.a).toBe(input.b)
    expect(input.self.a).toBe(input.a)
  })
})
