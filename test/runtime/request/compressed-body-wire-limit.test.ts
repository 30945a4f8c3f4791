/**
 * Regression: a gzip/deflate body was limited only after decompression, so 40 MiB of empty
 * stored deflate blocks decoding to `{"a":1}` were read and accepted. The bytes received count
 * too, against the same limit, over real HTTP.
 */
import { deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { MULTIPART_TYPE, multipart, send, useServers } from './helpers.js'

const { serve, freshDir } = useServers()
const JSON_BODY = '{"a":1}'
// A stored (uncompressed) deflate block that is not the last and holds nothing: 5 bytes.
const EMPTY_BLOCK = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])

/** `JSON_BODY` gzip- or deflate-encoded, with `count` empty blocks before its data. */
function padded(encoding: 'gzip' | 'deflate', count: number): Buffer {
  const encoded = encoding === 'gzip' ? gzipSync(JSON_BODY) : deflateSync(JSON_BODY)
  const header = encoding === 'gzip' ? 10 : 2
  const blocks = Buffer.concat(Array.from({ length: count }, () => EMPTY_BLOCK))
  return Buffer.concat([encoded.subarray(0, header), blocks, encoded.subarray(header)])
}

/** `JSON_BODY` gzip-encoded in exactly `size` bytes (the padding is a header comment). */
function gzipOfSize(size: number): Buffer {
  const encoded = gzipSync(JSON_BODY)
  const header = Buffer.from(encoded.subarray(0, 10))
  header[3]! |= 0x10 // FCOMMENT: a zero-terminated comment follows the header
  const comment = Buffer.alloc(size - encoded.length, 'c')
  comment[comment.length - 1] = 0
  return Buffer.concat([header, comment, encoded.subarray(10)])
}

function post(port: number, encoding: string, body: Buffer, chunked: boolean) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-encoding': encoding,
  }
  if (chunked) headers['transfer-encoding'] = 'chunked'
  return send(port, { headers, body })
}

describe('compressed bodies count the bytes received', () => {
  it('refuses empty deflate blocks past the limit, counted as they stream and when declared', async () => {
    const { port } = await serve({ limits: { body: 1024 } })
    for (const encoding of ['gzip', 'deflate'] as const) {
      const small = await post(port, encoding, padded(encoding, 100), true)
      expect([small.status, small.body.input]).toEqual([200, { a: 1 }])
      for (const chunked of [true, false]) {
        const big = await post(port, encoding, padded(encoding, 1000), chunked)
        expect(big).toEqual({
          status: 413,
          body: { error: 'Request body exceeds the limit of 1024 bytes' },
        })
      }
    }
    expect((await send(port, { method: 'GET', path: '/?ok=1' })).body.query).toEqual({ ok: '1' })
  })

  it('accepts exactly the limit received and refuses one byte more', async () => {
    const { port } = await serve({ limits: { body: 1024 } })
    expect(gzipOfSize(1024)).toHaveLength(1024)
    const exact = await post(port, 'gzip', gzipOfSize(1024), true)
    expect([exact.status, exact.body.input]).toEqual([200, { a: 1 }])
    expect((await post(port, 'gzip', gzipOfSize(1025), true)).status).toBe(413)
  })

  it('with the default limit (1 MiB): 2 MiB of empty blocks are a 413', async () => {
    const { port } = await serve()
    const body = padded('gzip', 420_000)
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024)
    expect((await post(port, 'gzip', body, true)).status).toBe(413)
  })

  it('bounds a compressed multipart body by the multipart total, as received', async () => {
    const limits = { body: 1024, fileSize: 1024, totalFileSize: 1024, parts: 4 }
    const total = 1024 + 1024 + 1024 * 1024 + 4 * 1024
    const { port } = await serve({ limits, uploadDir: await freshDir() })
    const form = multipart([{ name: 'a', value: '1' }])
    const encoded = gzipSync(form)
    const blocks = (count: number) =>
      Buffer.concat([
        encoded.subarray(0, 10),
        Buffer.concat(Array.from({ length: count }, () => EMPTY_BLOCK)),
        encoded.subarray(10),
      ])
    const headers = { 'content-type': MULTIPART_TYPE, 'content-encoding': 'gzip' }
    const small = await send(port, { headers, body: blocks(100) })
    expect([small.status, small.body.input]).toEqual([200, { a: '1' }])
    const chunked = { ...headers, 'transfer-encoding': 'chunked' }
    const big = await send(port, { headers: chunked, body: blocks(total / 5 + 1) })
    expect(big).toEqual({
      status: 413,
      body: { error: `Request body exceeds the limit of ${total} bytes` },
    })
  })
})
