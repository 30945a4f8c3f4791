/**
 * The audit's hostile raw HTTP, replayed against the real `fw serve --routes routes.example.ts`
 * and against the production `node server.mjs` that `fw init` scaffolds: both wire the kernel
 * with `attachKernel`, so both answer every finding with a JSON error, in request order.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'
import { listeningPort, serveApp, type ServedApp } from '../support/server.js'
import { exchange, head, splitAnswers } from '../runtime/kernel/wire.js'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXI'
const filler = (count: number): string[] => Array.from({ length: count }, () => 'a:1')

let app: ServedApp
let production: ServedApp

beforeAll(async () => {
  assertBuilt()
  app = await serveApp(['--routes', 'routes.example.ts', '--cache', join(makeProject(), 'cache')])
  production = await serveApp(
    ['--routes', 'routes.example.ts', '--cache', join(makeProject(), 'cache')],
    { env: { APP_ENV: 'production', JWT_SECRET: 's'.repeat(40) } },
  )
})

afterAll(async () => {
  await app?.stop()
  await production?.stop()
  cleanupProjects()
})

async function statuses(port: number, request: string | Buffer): Promise<number[]> {
  return splitAnswers((await exchange(port, request)).text).map((a) => a.status)
}

describe('fw serve --routes routes.example.ts under hostile HTTP', () => {
  it('answers /auth/me (401) before the 400 for garbage pipelined after it, then closes', async () => {
    const me = head(['GET /auth/me HTTP/1.1', 'Host: x', `Authorization: Bearer ${TOKEN}`])
    const { text, closed } = await exchange(app.port, `${me}GARBAGE\r\n\r\n`)
    const answers = splitAnswers(text)
    expect(answers.map((a) => a.status)).toEqual([401, 400])
    expect(answers[0]!.headers['www-authenticate']).toMatch(/^Bearer/)
    expect(closed).toBe(true)
  })

  it('answers 2100 header lines with 431, never an echo without its body', async () => {
    const request = head(
      [
        'POST /demo/echo HTTP/1.1',
        'Host: x',
        ...filler(2100),
        'Content-Type: application/json',
        'Content-Length: 7',
      ],
      '{"a":1}',
    )
    expect(await statuses(app.port, request)).toEqual([431])
    const twoHosts = head(['GET /demo/attributes HTTP/1.1', 'Host: x', ...filler(2100), 'Host: y'])
    expect(await statuses(app.port, twoHosts)).toEqual([431])
  })

  it('refuses a JSON body that is not UTF-8 (400) or declares another charset (415)', async () => {
    const body = Buffer.from('{"a":"caf\xe9"}', 'latin1')
    const post = (type: string): Buffer =>
      Buffer.concat([
        Buffer.from(
          head([
            'POST /demo/echo HTTP/1.1',
            'Host: x',
            `Content-Type: ${type}`,
            `Content-Length: ${body.length}`,
            'Connection: close',
          ]),
        ),
        body,
      ])
    const [invalid] = splitAnswers((await exchange(app.port, post('application/json'))).text)
    expect(invalid!.status).toBe(400)
    expect(JSON.parse(invalid!.body).error).toBe('Request body is not valid UTF-8')
    const latin1 = post('application/json; charset=iso-8859-1')
    expect(await statuses(app.port, latin1)).toEqual([415])
  })

  it('answers Transfer-Encoding: gzip, chunked with 501', async () => {
    const request = head([
      'POST /demo/echo HTTP/1.1',
      'Host: x',
      'Content-Type: application/json',
      'Transfer-Encoding: gzip, chunked',
    ])
    expect(await statuses(app.port, `${request}3\r\nabc\r\n0\r\n\r\n`)).toEqual([501])
  })

  it('answers CONNECT with 501', async () => {
    expect(await statuses(app.port, head(['CONNECT x:443 HTTP/1.1', 'Host: x:443']))).toEqual([501])
  })

  it("answers what Node used to answer itself in fw's error format", async () => {
    for (const request of [
      head(['GET /demo/attributes HTTP/1.1']),
      head(['GET /demo/attributes HTTP/1.1', 'Host: x', 'Expect: something-else']),
      head(['GET /demo/attributes HTTP/1.1', 'Host: x', 'bad header line']),
    ]) {
      const [answer] = splitAnswers((await exchange(app.port, request)).text)
      expect(answer!.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(answer!.headers['cache-control']).toBe('no-store')
      expect(answer!.headers['x-content-type-options']).toBe('nosniff')
    }
    const old = head(['GET /demo/attributes HTTP/1.0', 'Connection: close'])
    expect(await statuses(app.port, old)).toEqual([200])
  })

  it('answers a request-target over the limit with 414 and an unknown method with 501', async () => {
    const long = head([`GET /demo/${'a'.repeat(20_000)} HTTP/1.1`, 'Host: x'])
    expect(await statuses(app.port, long)).toEqual([414])
    expect(await statuses(app.port, head(['BREW /x HTTP/1.1', 'Host: x']))).toEqual([501])
    expect(await statuses(app.port, head(['get /x HTTP/1.1', 'Host: x']))).toEqual([501])
  })

  it('redirects OPTIONS * in production to the https root, not https://localhost*', async () => {
    const request = head(['OPTIONS * HTTP/1.1', 'Host: localhost', 'Connection: close'])
    const [answer] = splitAnswers((await exchange(production.port, request)).text)
    expect(answer!.status).toBe(301)
    expect(answer!.headers.location).toBe('https://localhost/')
  })
})

describe('the scaffolded production server.mjs under hostile HTTP', () => {
  let port: number
  let child: ChildProcess

  beforeAll(async () => {
    const dir = join(makeProject(), 'app')
    expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
    expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
    child = spawn(process.execPath, [join(dir, 'server.mjs')], {
      cwd: dir,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent' },
    })
    port = await listeningPort(child)
  })

  afterAll(() => {
    child?.kill('SIGTERM')
  })

  it('answers in request order, and refuses what it cannot serve with JSON errors', async () => {
    const good = head(['GET / HTTP/1.1', 'Host: x'])
    expect(await statuses(port, `${good}GARBAGE\r\n\r\n`)).toEqual([200, 400])
    expect(await statuses(port, head(['GET / HTTP/1.1', 'Host: x', ...filler(2100)]))).toEqual([
      431,
    ])
    expect(await statuses(port, head(['GET / HTTP/1.1']))).toEqual([400])
    expect(await statuses(port, head(['GET / HTTP/1.1', 'Host: x', 'Expect: nope']))).toEqual([417])
    expect(await statuses(port, head(['CONNECT x:443 HTTP/1.1', 'Host: x:443']))).toEqual([501])
    const coded = head(['POST / HTTP/1.1', 'Host: x', 'Transfer-Encoding: gzip, chunked'])
    expect(await statuses(port, `${coded}0\r\n\r\n`)).toEqual([501])
  })
})
