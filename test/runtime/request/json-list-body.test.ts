/**
 * A JSON body that is a list (`[{...}, {...}]`) reads through the input accessors by index, as a
 * PHP array with numeric keys does in Laravel: it used to read as `{}` there, while `json()` had it.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { json } from '../../../src/runtime/response.js'
import { bootKernel, cleanupTempDirs, serve } from '../kernel/support.js'

const JSON_TYPE = { 'content-type': 'application/json' }

async function jsonBody(body: string): Promise<FwRequest> {
  const request = FwRequest.create({ method: 'POST', uri: '/x', headers: JSON_TYPE, body })
  await request.loadBody()
  return request
}

const listRequest = (): Promise<FwRequest> => jsonBody('[{"a":1,"b":"x"},{"a":2,"b":""}]')

afterAll(cleanupTempDirs)

describe('a JSON list body', () => {
  it('is the list in input(), a copy the caller may change', async () => {
    const r = await listRequest()
    const all = r.input() as unknown as { a: number }[]
    expect(all).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: '' },
    ])
    all[0]!.a = 99
    all.pop()
    expect(r.input()).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: '' },
    ])
    expect(r.input()).not.toBe(r.input())
    expect(r.json()).toEqual(r.input())
  })

  it('reads items and their fields by index, with the fallback for a missing one', async () => {
    const r = await listRequest()
    expect(r.input('0.a')).toBe(1)
    expect(r.input('1')).toEqual({ a: 2, b: '' })
    expect(r.input('5', 'd')).toBe('d')
    expect(r.input('0.c', 'd')).toBe('d')
    expect(r.input('-1', 'd')).toBe('d')
    expect(r.input('length', 'd')).toBe('d')
    ;(r.input('1') as { a: number }).a = 99
    expect(r.input('1.a')).toBe(2)
  })

  it('answers has() and filled() by index', async () => {
    const r = await listRequest()
    expect(r.has('0')).toBe(true)
    expect(r.has(['0.a', '1.a'])).toBe(true)
    expect(r.has(['0.a', '2.a'])).toBe(false)
    expect(r.hasAll(['0', '1'])).toBe(true)
    expect(r.filled('0.a')).toBe(true)
    expect(r.filled('1.b')).toBe(false)
  })

  it('only() gives a map keyed by index, as Laravel keeps numeric keys', async () => {
    const r = await listRequest()
    expect(r.only('1.a')).toEqual({ 1: { a: 2 } })
    expect(r.only('0', '7')).toEqual({ 0: { a: 1, b: 'x' } })
  })

  it('except() gives the list without the items, the gaps closed', async () => {
    const r = await listRequest()
    expect(r.except('0')).toEqual([{ a: 2, b: '' }])
    expect(r.except('1', '0')).toEqual([])
    expect(r.except('0.b', '1.a')).toEqual([{ a: 1 }, { b: '' }])
    expect(r.except('9')).toEqual(r.input())
    expect(r.input()).toHaveLength(2)
  })

  it('keeps a forbidden key of an item out of its copies and of Object.prototype', async () => {
    const r = await jsonBody('[{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}},"k":1}]')
    const first = r.input('0') as Record<string, unknown>
    expect(first).toEqual({ k: 1 })
    expect(first.x).toBeUndefined()
    expect(r.has('0.__proto__')).toBe(false)
    expect(r.only('0.__proto__.x', '0.constructor')).toEqual({})
    expect((r.input() as unknown as Record<string, unknown>[])[0]!.x).toBeUndefined()
    expect(r.except('0.k')).toEqual([{}])
    expect(({} as Record<string, unknown>).x).toBeUndefined()
    expect(({} as Record<string, unknown>).y).toBeUndefined()
  })
})

describe('withParsedBody() of a list', () => {
  it('keeps it a list, read by index, and a copy of what was given', async () => {
    const given = [{ name: 'Ada' }, { name: 'Grace' }]
    const r = (await jsonBody('{}')).withParsedBody(given)
    given[0]!.name = 'changed'
    expect(r.input()).toEqual([{ name: 'Ada' }, { name: 'Grace' }])
    expect(r.input('1.name')).toBe('Grace')
    expect(r.getParsedBody()).toEqual([{ name: 'Ada' }, { name: 'Grace' }])
  })
})

describe('other bodies are read as before', () => {
  it('a list inside an object: only() keys it by index, except() closes the gaps', async () => {
    const r = await jsonBody('{"items":[{"a":1},{"a":2}]}')
    expect(r.input()).toEqual({ items: [{ a: 1 }, { a: 2 }] })
    expect(r.input('items.1.a')).toBe(2)
    expect(r.only('items.1.a')).toEqual({ items: { 1: { a: 2 } } })
    expect(r.except('items.0')).toEqual({ items: [{ a: 2 }] })
  })

  it.each(['42', '"text"', 'null', 'true'])('a JSON scalar (%s) has no fields', async (body) => {
    const r = await jsonBody(body)
    expect(r.input()).toEqual({})
    expect(Array.isArray(r.input())).toBe(false)
    expect(r.input('0', 'd')).toBe('d')
    expect(r.has('0')).toBe(false)
    expect(r.except('0')).toEqual({})
    expect(r.json()).toEqual(JSON.parse(body))
  })

  it('a form body is still a map of fields', () => {
    const r = FwRequest.create({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '0=a&1=b',
    })
    expect(r.input()).toEqual({ 0: 'a', 1: 'b' })
    expect(Array.isArray(r.input())).toBe(false)
    expect(r.except('0')).toEqual({ 1: 'b' })
  })
})

describe('over HTTP', () => {
  it('a handler reads a posted JSON list through input()', async () => {
    const kernel = await bootKernel((r) => {
      r.post('/items', (req: FwRequest) => json({ first: req.input('0.name'), all: req.input() }))
    })
    const served = await serve(kernel)
    try {
      const body = JSON.stringify([{ name: 'Ada' }, { name: 'Grace' }])
      const reply = await served.send('POST', '/items', { headers: JSON_TYPE, body })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.text)).toEqual({
        first: 'Ada',
        all: [{ name: 'Ada' }, { name: 'Grace' }],
      })
    } finally {
      await served.close()
    }
  })
})
