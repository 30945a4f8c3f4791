/**
 * Regression: in production the HTTPS redirect of `OPTIONS *` (or `GET *`) built
 * `Location: https://localhost*`, host and asterisk run together. The asterisk form names no
 * resource, so it is sent to the https server's root: `https://localhost/`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpsRedirect } from '../../../src/runtime/middleware/https-redirect.js'
import { FwRequest } from '../../../src/runtime/request/request.js'
import { json } from '../../../src/runtime/response.js'
import { cleanupTempDirs } from './support.js'
import { exchange, head, serveWire, splitAnswers, type WireServer } from './wire.js'

let wire: WireServer

beforeAll(async () => {
  wire = await serveWire(
    (r) => {
      r.get('/account', () => ({ ok: true }))
    },
    { env: 'production', signingKeys: ['prod-key'] },
  )
})

afterAll(async () => {
  await wire.close()
  cleanupTempDirs()
})

describe('the production HTTPS redirect of an asterisk-form target', () => {
  it.each(['OPTIONS', 'GET'])('sends %s * to the https root', async (method) => {
    const request = head([`${method} * HTTP/1.1`, 'Host: localhost', 'Connection: close'])
    const [answer] = splitAnswers((await exchange(wire.port, request)).text)
    expect(answer!.status).toBe(301)
    expect(answer!.headers.location).toBe('https://localhost/')
  })

  it('keeps the path and query of an ordinary target', async () => {
    const request = head(['GET /account?tab=1 HTTP/1.1', 'Host: localhost', 'Connection: close'])
    const [answer] = splitAnswers((await exchange(wire.port, request)).text)
    expect(answer!.headers.location).toBe('https://localhost/account?tab=1')
  })

  it('is the same in the httpsRedirect middleware', async () => {
    const request = FwRequest.create({
      method: 'OPTIONS',
      uri: '*',
      headers: { host: 'localhost' },
    })
    const response = await httpsRedirect(request, async () => json({}))
    expect(response.header('location')).toBe('https://localhost/')
  })
})
