/**
 * "Expect: 100-continue" over real HTTP, through `fw serve`'s server host: the 100 goes out only
 * when the body is about to be read, so a request refused before that is answered without the
 * client uploading its body.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/serve/server.js'
import { bodyRoutes, bootKernel, cleanupTempDirs } from './support.js'

interface Outcome {
  status: number
  body: string
  /** Whether the server sent "100 Continue". */
  continued: boolean
  /** Whether the client sent its body. */
  uploaded: boolean
}

let running: RunningServer
let port: number

beforeAll(async () => {
  const kernel = await bootKernel(bodyRoutes)
  running = await startServer(kernel, { port: 0, host: '127.0.0.1' })
  port = Number(new URL(running.url).port)
})

afterAll(async () => {
  await running.close()
  cleanupTempDirs()
})

/** Sends headers with Expect: 100-continue; the body only if the server asks for it. */
function post(
  path: string,
  body: string,
  declaredLength = Buffer.byteLength(body),
  expectation = '100-continue',
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let continued = false
    let uploaded = false
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: {
          expect: expectation,
          'content-type': 'application/json',
          'content-length': declaredLength,
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: Buffer.concat(chunks).toString(),
            continued,
            uploaded,
          }),
        )
      },
    )
    req.on('continue', () => {
      continued = true
      uploaded = true
      req.end(body)
    })
    req.on('error', reject)
    req.flushHeaders()
  })
}

describe('Expect: 100-continue', () => {
  it('sends 100 Continue when the handler reads the body, then answers it', async () => {
    const outcome = await post('/echo', '{"a":1}')
    expect(outcome).toEqual({
      status: 200,
      body: '{"got":{"a":1}}',
      continued: true,
      uploaded: true,
    })
  })

  it('answers 413 to a declared length over the limit without asking for the body', async () => {
    const outcome = await post('/echo', '', 2 * 1024 * 1024)
    expect([outcome.status, outcome.continued, outcome.uploaded]).toEqual([413, false, false])
    expect(JSON.parse(outcome.body)).toMatchObject({
      error: expect.stringContaining('exceeds the limit'),
      code: 413,
    })
  })

  it('answers 404 and 401 without asking for the body', async () => {
    const missing = await post('/nowhere', '{"a":1}')
    expect([missing.status, missing.continued]).toEqual([404, false])
    const refused = await post('/private', '{"a":1}')
    expect([refused.status, refused.continued]).toEqual([401, false])
  })

  it('keeps serving afterwards', async () => {
    expect((await post('/echo', '{"b":2}')).status).toBe(200)
  })
})

describe('an Expect that names 100-continue but is not just that', () => {
  it('is 417 without the 100, as any other expectation (Node took it for 100-continue)', async () => {
    for (const expectation of ['100-continue-x', '100-continue, foo', 'foo, 100-continue']) {
      const outcome = await post('/echo', '{"a":1}', undefined, expectation)
      expect({ expectation, status: outcome.status, continued: outcome.continued }).toEqual({
        expectation,
        status: 417,
        continued: false,
      })
    }
    expect(await post('/echo', '{"a":1}', undefined, ' 100-Continue ')).toMatchObject({
      status: 200,
      continued: true,
    })
  })
})
