/**
 * Regression tests from an audit of the kernel's composition features and the built-in
 * middleware (session 6): a TRUSTED_PROXIES entry that is no proxy is a clear boot error, and
 * hostile X-Forwarded-For and Accept* headers cost a bounded amount of work.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Kernel } from '../../../src/runtime/kernel.js'
import type { FwRequest } from '../../../src/runtime/request/request.js'
import { bootKernel, cleanupTempDirs, serve, type Register, type Served } from './support.js'

const routes: Register = (r) => {
  r.get('/ip', (request: FwRequest) => ({ client_ip: request.getAttribute('client_ip') }))
  r.get(
    '/negotiate',
    (request: FwRequest) => ({
      type: request.getAttribute('negotiated.type'),
      charset: request.getAttribute('negotiated.charset'),
      locale: request.getAttribute('locale'),
    }),
    { middleware: ['negotiate:en,fr'] },
  )
}

let served: Served

beforeAll(async () => {
  served = await serve(await bootKernel(routes))
})

afterAll(async () => {
  await served.close()
  await cleanupTempDirs()
})

const get = async (path: string, headers: Record<string, string>): Promise<any> => {
  const reply = await served.send('GET', path, { headers })
  expect(reply.status).toBe(200)
  return JSON.parse(reply.text)
}

describe('TRUSTED_PROXIES', () => {
  const saved = process.env.TRUSTED_PROXIES
  afterEach(() => {
    if (saved === undefined) delete process.env.TRUSTED_PROXIES
    else process.env.TRUSTED_PROXIES = saved
  })

  it.each([
    ['10.0.0.1, proxy.internal', 'TRUSTED_PROXIES: invalid IP address: proxy.internal'],
    ['10.0.0.0/33', 'TRUSTED_PROXIES: invalid range on address: 10.0.0.0/33'],
    ['0.0.0.0/0', 'TRUSTED_PROXIES: invalid range on address: 0.0.0.0/0'],
  ])('%s is a boot error naming the entry, not "a bug in fw"', async (value, message) => {
    process.env.TRUSTED_PROXIES = value
    const booting = bootKernel(routes)
    await expect(booting).rejects.toThrow(message)
    await expect(booting).rejects.toMatchObject({
      code: 'FW_SERVE_CONFIG',
      hint: expect.stringContaining('CIDR'),
    })
  })

  it('takes addresses, CIDR ranges and names in a comma-separated list', async () => {
    process.env.TRUSTED_PROXIES = ' 10.0.0.0/8 ,, loopback '
    const kernel: Kernel = await bootKernel(routes)
    const server = await serve(kernel)
    try {
      const reply = await server.send('GET', '/ip', {
        headers: { 'x-forwarded-for': '198.51.100.7, 10.1.2.3' },
      })
      expect(JSON.parse(reply.text).client_ip).toBe('198.51.100.7')
    } finally {
      await server.close()
    }
  })
})

describe('a long X-Forwarded-For', () => {
  // 127.0.0.40, ..., 127.0.0.1: every hop a trusted (loopback) proxy.
  const hops = Array.from({ length: 40 }, (_, i) => `127.0.0.${40 - i}`)

  it('is read through its nearest 32 hops only: past them, the 32nd is the client', async () => {
    const body = await get('/ip', { 'x-forwarded-for': ['198.51.100.7', ...hops].join(', ') })
    expect(body.client_ip).toBe('127.0.0.32')
  })

  it('still stops at the first untrusted hop within them', async () => {
    const body = await get('/ip', {
      'x-forwarded-for': ['6.6.6.6', ...hops.slice(0, 20), '198.51.100.7', '127.0.0.1'].join(', '),
    })
    expect(body.client_ip).toBe('198.51.100.7')
  })
})

describe('a long Accept, Accept-Charset or Accept-Language', () => {
  // 31 or 40 ranges nothing is offered for, each long enough for the header to count as long.
  const junk = (n: number, unit: (i: number) => string): string[] =>
    Array.from({ length: n }, (_, i) => unit(i))
  const types = (n: number) => junk(n, (i) => `application/x-unknown-${i}`)
  const charsets = (n: number) => junk(n, (i) => `x-unknown-charset-${i}`)
  const languages = (n: number) => junk(n, (i) => `xx-unknown${i}`)

  it('counts its first 32 ranges', async () => {
    const body = await get('/negotiate', {
      accept: [...types(31), 'text/html'].join(', '),
      'accept-charset': [...charsets(31), 'iso-8859-1'].join(', '),
      'accept-language': [...languages(31), 'fr'].join(', '),
    })
    expect(body).toEqual({ type: 'text/html', charset: 'iso-8859-1', locale: 'fr' })
  })

  it('ignores the ranges after them (negotiator weighs each against every value offered)', async () => {
    const body = await get('/negotiate', {
      accept: [...types(40), 'text/html'].join(', '),
      'accept-charset': [...charsets(40), 'iso-8859-1'].join(', '),
      'accept-language': [...languages(40), 'fr'].join(', '),
    })
    expect(body).toEqual({ type: null, charset: null, locale: 'en' })
  })
})
