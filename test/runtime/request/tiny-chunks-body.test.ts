/**
 * Regression: a body sent as many tiny chunks (chunked encoding lets a client send each byte as
 * its own chunk) was kept chunk by chunk until its end: 1 MiB in 1-byte chunks held a million
 * Buffer objects, ~150 MB of heap for one request under the 1 MiB limit, and two such requests
 * ran a server with a 256 MB heap out of memory (a hostile-input run found it).
 */
import { request } from 'node:http'
import { Readable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { BodyBytes } from '../../../src/runtime/request/body-bytes.js'
import { readPlain } from '../../../src/runtime/request/read-body.js'
import { useServers } from './helpers.js'

const { serve } = useServers()

// A full collection on demand, so the heap measured holds what is kept, not garbage.
setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

/** POSTs `body` as JSON in chunked encoding, each byte its own chunk (one write each). */
function postByteChunks(port: number, body: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    for (const byte of Buffer.from(body)) req.write(Buffer.of(byte))
    req.end()
  })
}

describe('a body sent in tiny chunks', () => {
  it('is read whole, up to exactly the limit, and one byte more is a 413', async () => {
    const { port } = await serve({ limits: { body: 40_000 } })
    const value = 'ab'.repeat(19_989)
    const fits = `{"v":"${value}","n":[1,2,3,4]}` // 40,000 bytes
    expect(Buffer.byteLength(fits)).toBe(40_000)
    const reply = await postByteChunks(port, fits)
    expect(reply.status).toBe(200)
    expect((reply.body as { input: unknown }).input).toEqual({ v: value, n: [1, 2, 3, 4] })
    const over = await postByteChunks(port, `${fits} `)
    expect(over).toEqual({
      status: 413,
      body: { error: 'Request body exceeds the limit of 40000 bytes' },
    })
  })

  it('holds about its own size in memory, not an object per chunk', async () => {
    const size = 1_000_000
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < size; i++) yield Buffer.from('a')
      })(),
      { objectMode: false },
    )
    let kept = 0
    collect()
    const heapBefore = process.memoryUsage().heapUsed
    await readPlain(source, 1024 * 1024, (body) => {
      expect(body.length).toBe(size)
      collect()
      kept = process.memoryUsage().heapUsed - heapBefore
    })
    // Kept chunk by chunk, a million Buffers were ~100 MB of heap here; copied, the bytes are
    // one Buffer outside the heap.
    expect(kept).toBeLessThan(8 * 1024 * 1024)
  })

  it('gives back the bytes in order, whatever the chunk sizes (empty ones included)', () => {
    let seed = 7
    const random = (n: number): number => ((seed = (seed * 48271) % 2147483647), seed % n)
    for (let run = 0; run < 300; run++) {
      const chunks = Array.from({ length: random(40) }, () =>
        Buffer.from(Array.from({ length: [0, 1, 2, 100, 5000][random(5)]! }, () => random(256))),
      )
      const bytes = new BodyBytes()
      for (const chunk of chunks) bytes.add(chunk)
      expect(bytes.size).toBe(Buffer.concat(chunks).length)
      expect(bytes.bytes().equals(Buffer.concat(chunks))).toBe(true)
    }
    const one = Buffer.from('only')
    const single = new BodyBytes()
    single.add(one)
    expect(single.bytes()).toBe(one) // one chunk: no copy
    expect(single.bytes(true)).not.toBe(one)
    expect(single.bytes(true).equals(one)).toBe(true)
  })
})
