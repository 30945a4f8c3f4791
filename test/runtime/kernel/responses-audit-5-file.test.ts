/**
 * file() and a Range on an empty file. The suffix of `-500` ("the last 500 bytes") was cut to the
 * file's size, `-0`, which is unsatisfiable: a 416 where RFC 9110 §14.1.1 calls a non-zero suffix
 * satisfiable whatever the length. A resuming download of an empty file failed.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { file } from '../../../src/runtime/file.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { tempDir } from '../../support/compile.js'
import { bootKernel, cleanupTempDirs, serve, type Served } from './support.js'

let server: Served

beforeAll(async () => {
  const path = join(tempDir('fw-file-'), 'empty.txt')
  writeFileSync(path, '')
  server = await serve(
    await bootKernel((r) => {
      r.get('/empty', (req: FwRequest) => file(path, { request: req }), 'empty')
    }),
  )
})

afterAll(async () => {
  await server.close()
  cleanupTempDirs()
})

describe('a Range on an empty file', () => {
  it.each(['bytes=-500', 'bytes=-1', 'bytes=0-'])(
    'answers the whole, empty file with 200 (%s), not 416',
    async (range) => {
      const reply = await server.send('GET', '/empty', { headers: { range } })
      expect(reply.status).toBe(200)
      expect(reply.headers['content-length']).toBe('0')
      expect(reply.headers['content-range']).toBeUndefined()
      expect(reply.text).toBe('')
    },
  )
})
