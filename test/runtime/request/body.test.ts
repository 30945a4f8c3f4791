/** Body accessors (rules 1–3), loading rules and the shared, load-once body. */
import { writeFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { UploadedFile } from '../../../src/runtime/request/uploaded-file.js'
import { listDir, MULTIPART_TYPE, multipart, uploadDir } from './helpers.js'

const JSON_TYPE = { 'content-type': 'application/json' }

function jsonRequest(body: unknown, init: Parameters<typeof FwRequest.create>[0] = {}) {
  return FwRequest.create({
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify(body),
    ...init,
  })
}

describe('input()', () => {
  const r = jsonRequest(
    {
      user: { name: 'Ada', address: { city: 'London' } },
      items: [{ name: 'a' }, { name: 'b' }],
      page: 'body',
    },
    { uri: '/?page=query&sort=asc' },
  )

  it('reads the body only (spec rule 1): the query stays in query()', () => {
    expect(r.input('page')).toBe('body')
    expect(r.input('sort')).toBeNull()
    expect(r.has('sort')).toBe(false)
    expect(r.query('sort')).toBe('asc')
  })

  it('reads dotted paths through objects and arrays; missing gives the default', () => {
    expect(r.input('user.address.city')).toBe('London')
    expect(r.input('items.1.name')).toBe('b')
    expect(r.input('items.5.name')).toBeNull()
    expect(r.input('user.phone', 'none')).toBe('none')
    expect(r.input('user.name.first')).toBeNull()
  })

  it('never finds inherited members', () => {
    expect(r.input('toString')).toBeNull()
    expect(r.input('user.constructor')).toBeNull()
    expect(r.has('hasOwnProperty')).toBe(false)
  })

  it('drops forbidden JSON keys at any depth, also when spelled with escapes', () => {
    const body = JSON.stringify({
      list: [{ ok: 1, constructor: { prototype: { x: 1 } } }],
      nested: { prototype: 1, keep: true },
    }).replace('"ok"', '"\\u005f_proto__":{"polluted":1},"ok"')
    const parsed = FwRequest.create({ headers: JSON_TYPE, body }).getParsedBody()
    expect(parsed).toEqual({ list: [{ ok: 1 }], nested: { keep: true } })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('parses the body for any method (rule 1)', () => {
    const del = FwRequest.create({ method: 'DELETE', headers: JSON_TYPE, body: '{"id":3}' })
    expect(del.input('id')).toBe(3)
  })

  it('is {} without a body, with an empty body, and for unparsed types', () => {
    expect(FwRequest.create().input()).toEqual({})
    expect(FwRequest.create({ headers: JSON_TYPE, body: '' }).input()).toEqual({})
    const csv = FwRequest.create({ headers: { 'content-type': 'text/csv' }, body: 'a,b' })
    expect(csv.input()).toEqual({})
    expect(csv.getContent()).toBe('a,b')
  })

  it('reads a JSON list body through input() as through json(), never with the query', () => {
    const list = FwRequest.create({ headers: JSON_TYPE, body: '[{"id":1}]', uri: '/?q=1' })
    expect(list.input()).toEqual([{ id: 1 }])
    expect(list.json()).toEqual([{ id: 1 }])
    expect(list.json('0.id')).toBe(1)
  })

  it('reads application/*+json as JSON', () => {
    const r2 = FwRequest.create({
      headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' },
      body: '{"a":1}',
    })
    expect(r2.json('a')).toBe(1)
  })
})

describe('json(), post()', () => {
  it('json() reads only a JSON body', () => {
    expect(jsonRequest({ a: 1 }).json()).toEqual({ a: 1 })
    expect(jsonRequest({ a: 1 }).json('a')).toBe(1)
    expect(jsonRequest({ a: 1 }).json('b', 2)).toBe(2)
    const form = FwRequest.create({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    })
    expect(form.json()).toBeNull()
    expect(form.json('a', 'd')).toBe('d')
  })

  it('post() reads only form data of POST requests (rule 3)', () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    expect(FwRequest.create({ method: 'POST', headers: form, body: 'a[b]=1' }).post('a.b')).toBe(
      '1',
    )
    expect(FwRequest.create({ method: 'PUT', headers: form, body: 'a=1' }).post()).toEqual({})
    expect(jsonRequest({ a: 1 }).post()).toEqual({})
    expect(FwRequest.create({ method: 'POST', post: { name: 'Ada' } }).post('name')).toBe('Ada')
  })

  it('post() ignores the method override: the wire method is POST', () => {
    const r = FwRequest.create({
      method: 'POST',
      post: { a: '1' },
      headers: { 'x-http-method-override': 'PUT' },
    })
    expect(r.getMethod()).toBe('PUT')
    expect(r.post('a')).toBe('1')
  })
})

describe('has, hasAll, filled, only, except', () => {
  const r = FwRequest.create({
    method: 'POST',
    post: {
      name: 'Ada',
      blank: '  ',
      empty: '',
      none: null,
      list: [],
      tags: ['x'],
      user: { a: 1, b: 2 },
    },
  })

  it('has() is true when every key is present, null included', () => {
    expect(r.has('name')).toBe(true)
    expect(r.has('none')).toBe(true)
    expect(r.has(['name', 'user.a'])).toBe(true)
    expect(r.has(['name', 'missing'])).toBe(false)
    expect(r.hasAll(['name', 'tags'])).toBe(true)
    expect(r.hasAll(['name', 'nope'])).toBe(false)
  })

  it('filled() refuses null, blank strings and empty arrays', () => {
    expect(r.filled('name')).toBe(true)
    expect(r.filled('tags')).toBe(true)
    for (const key of ['blank', 'empty', 'none', 'list', 'missing'])
      expect(r.filled(key)).toBe(false)
    expect(r.filled(['name', 'tags'])).toBe(true)
    expect(r.filled(['name', 'empty'])).toBe(false)
  })

  it('only() keeps the given (dotted) keys that exist', () => {
    expect(r.only('name', 'user.b', 'missing')).toEqual({ name: 'Ada', user: { b: 2 } })
    expect(r.only(['name', 'tags'])).toEqual({ name: 'Ada', tags: ['x'] })
  })

  it('except() removes the given keys without touching the request', () => {
    expect(r.except('blank', 'empty', 'none', 'list', 'user.a')).toEqual({
      name: 'Ada',
      tags: ['x'],
      user: { b: 2 },
    })
    expect(r.input('user')).toEqual({ a: 1, b: 2 })
  })
})

describe('loading', () => {
  it('throws a clear error when a body accessor runs before loadBody()', async () => {
    const web = new Request('http://h/', { method: 'POST', headers: JSON_TYPE, body: '{"a":1}' })
    const r = FwRequest.fromWeb(web)
    for (const read of [
      () => r.input(),
      () => r.getContent(),
      () => r.files(),
      () => r.has('a'),
      () => r.json(),
    ]) {
      expect(read).toThrow('await request.loadBody()')
    }
    expect(r.query()).toEqual({}) // query and headers need no body
  })

  it('reads a multipart Request without a body as empty; an empty body it carries is a 400 (no empty form)', async () => {
    const headers = { 'content-type': MULTIPART_TYPE }
    const absent = FwRequest.fromWeb(new Request('http://h/', { method: 'POST', headers }))
    await absent.loadBody()
    expect([absent.input(), absent.files()]).toEqual([{}, {}])
    const empty = new Request('http://h/', { method: 'POST', headers, body: '' })
    const error = await FwRequest.fromWeb(empty)
      .loadBody()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      status: 400,
      message: expect.stringContaining('Malformed multipart body'),
    })
  })

  it('loads once, shared by copies made before and after', async () => {
    const web = new Request('http://h/', { method: 'POST', headers: JSON_TYPE, body: '{"a":1}' })
    const r = FwRequest.fromWeb(web)
    const before = r.withAttribute('x', 1)
    await Promise.all([r.loadBody(), before.loadBody(), r.loadBody()])
    const after = r.withHeader('x-y', 'z')
    expect([r.input('a'), before.input('a'), after.input('a')]).toEqual([1, 1, 1])
    expect(r.isBodyLoaded()).toBe(true)
  })

  it('fails the same way every time for a bad body', async () => {
    const web = new Request('http://h/', { method: 'POST', headers: JSON_TYPE, body: '{' })
    const r = FwRequest.fromWeb(web)
    await expect(r.loadBody()).rejects.toMatchObject({
      status: 400,
      message: 'Malformed JSON body',
    })
    await expect(r.loadBody()).rejects.toMatchObject({ status: 400 })
    expect(() => r.input()).toThrow('Malformed JSON body')
  })

  it('parses content given to create()/withBody() on first read (400 for malformed JSON)', () => {
    const r = FwRequest.create({ headers: JSON_TYPE, body: '{"a":1}' })
    expect(r.withBody('{"a":2}').input('a')).toBe(2)
    expect(() => r.withBody('{oops').input()).toThrow('Malformed JSON body')
    expect(r.input('a')).toBe(1)
  })

  it('withParsedBody replaces what input() and post() read, keeping the raw content', () => {
    const r = FwRequest.create({ method: 'POST', headers: JSON_TYPE, body: '{"a":1}' })
    const changed = r.withParsedBody({ a: 'trimmed' })
    expect([changed.input('a'), changed.json('a'), changed.getContent()]).toEqual([
      'trimmed',
      'trimmed',
      '{"a":1}',
    ])
  })

  it('withParsedBody before loading takes effect once the shared body is loaded', async () => {
    const web = new Request('http://h/', { method: 'POST', headers: JSON_TYPE, body: '{"a":1}' })
    const r = FwRequest.fromWeb(web)
    const derived = r.withParsedBody({ b: 2 })
    await derived.loadBody()
    expect(derived.input()).toEqual({ b: 2 })
    expect(r.input()).toEqual({ a: 1 })
  })
})

describe('files through create() and withBody()', () => {
  it('files() and file() give uploaded files, a list for multi-file fields', () => {
    const one = new UploadedFile({ path: '/tmp/a', size: 1, clientFilename: 'a.txt' })
    const two = new UploadedFile({ path: '/tmp/b', size: 2, clientFilename: 'b.txt' })
    const r = FwRequest.create({ method: 'POST', files: { avatar: one, docs: [one, two] } })
    expect(r.file('avatar')).toBe(one)
    expect(r.file('docs')).toEqual([one, two])
    expect(r.file('missing')).toBeNull()
    expect(Object.keys(r.files())).toEqual(['avatar', 'docs'])
    expect(r.withUploadedFiles({ x: two }).file('x')).toBe(two)
  })

  it('cleanup() leaves files given through withUploadedFiles alone', async () => {
    const { dir, remove } = await uploadDir()
    try {
      const path = `${dir}/mine`
      await writeFile(path, 'x')
      const web = new Request('http://h/', { method: 'POST', body: 'raw' })
      const r = FwRequest.fromWeb(web).withUploadedFiles({ f: new UploadedFile({ path, size: 1 }) })
      await r.loadBody()
      await r.cleanup()
      expect(await listDir(dir)).toEqual(['mine'])
    } finally {
      await remove()
    }
  })

  it('parses raw multipart content on loadBody() and cleans its temp files', async () => {
    const { dir, remove } = await uploadDir()
    try {
      const body = multipart([
        { name: 'a', value: '1' },
        { name: 'f', filename: 'f.txt', content: 'hello' },
      ])
      const r = FwRequest.create(
        { method: 'POST', headers: { 'content-type': MULTIPART_TYPE }, body },
        { uploadDir: dir },
      )
      await r.loadBody()
      expect(r.post('a')).toBe('1')
      const file = r.file('f') as UploadedFile
      expect([file.getClientFilename(), file.getSize()]).toEqual(['f.txt', 5])
      const text = await Readable.from(file.getStream()).toArray()
      expect(Buffer.concat(text).toString()).toBe('hello')
      expect(await listDir(dir)).toHaveLength(1)
      await r.withAttribute('x', 1).cleanup()
      expect(await listDir(dir)).toHaveLength(0)
    } finally {
      await remove()
    }
  })
})
