/**
 * Credentials an error carries stay out of the logs, in the shapes apps and HTTP clients give
 * them: token and secret fields of any spelling (accessToken, refresh_token, jwtSecret,
 * x-auth-token, password_hash), fields nested deep, the raw request head an axios error keeps
 * (`request._header`), bearer tokens and JWTs inside messages. Read from the JSON lines of the
 * default logger, for an error a handler throws over real HTTP, and from the development logger.
 */
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { createLogger, redactSecrets } from '../../src/runtime/logger.js'
import { devLogger } from '../../src/serve/dev-logger.js'
import { bootKernel, cleanupTempDirs, serve } from './kernel/support.js'

afterAll(cleanupTempDirs)

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlU0VDUkVU'

/** An error shaped as axios rejects with one: the request it sent, head included, and the config. */
function axiosLikeError(): Error {
  const head = `POST /v1/charge HTTP/1.1\r\nAccept: application/json\r\nAuthorization: Bearer SECRET-A\r\nCookie: sid=SECRET-B\r\nHost: api.example.com\r\n\r\n`
  return Object.assign(new Error('Request failed with status code 401'), {
    config: {
      url: '/v1/charge',
      data: '{"password":"SECRET-C"}',
      headers: { Authorization: 'Bearer SECRET-A' },
    },
    request: { _header: head, method: 'POST', path: '/v1/charge' },
    response: {
      status: 401,
      data: { error: 'bad token' },
      request: { res: { headers: { 'set-cookie': ['SECRET-D'] } } },
    },
  })
}

function lines(): { stream: Writable; read: () => Array<Record<string, any>> } {
  let text = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  })
  return {
    stream,
    read: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  }
}

describe('redaction of logged errors', () => {
  it('an HTTP client error a handler throws: no token, cookie or password in the JSON line', async () => {
    const sink = lines()
    const kernel = await bootKernel(
      (r) =>
        r.get('/charge', () => {
          throw axiosLikeError()
        }),
      {
        log: createLogger('production', 'info', sink.stream),
      },
    )
    const server = await serve(kernel)
    try {
      expect((await server.send('GET', '/charge')).status).toBe(500)
    } finally {
      await server.close()
    }
    const [line] = sink.read()
    expect(JSON.stringify(line)).not.toMatch(/SECRET/)
    expect(line!.err.request._header).toMatch(
      /^POST \/v1\/charge HTTP\/1\.1\r\nAccept: application\/json\r\nAuthorization: \[Redacted\]\r\nCookie: \[Redacted\]\r\nHost: api\.example\.com/,
    )
    expect(line!.err.response).toMatchObject({ status: 401, data: { error: 'bad token' } })
  })

  it('hides fields named like credentials, in any spelling', () => {
    const fields = {
      accessToken: 'hunter2',
      refresh_token: 'hunter2',
      idToken: 'hunter2',
      'x-auth-token': 'hunter2',
      jwtSecret: 'hunter2',
      JWT_SECRET: 'hunter2',
      clientSecret: 'hunter2',
      private_key: 'hunter2',
      password_hash: 'hunter2',
      newPassword: 'hunter2',
      jwt: 'hunter2',
      credentials: { user: 'u', pass: 'hunter2' },
      connectionString: 'postgres://u:hunter2@h/db',
      apiKey: 'hunter2',
    }
    const shown = redactSecrets(fields) as Record<string, unknown>
    expect(JSON.stringify(shown)).not.toMatch(/hunter2/)
    expect(Object.keys(shown)).toEqual(Object.keys(fields))
  })

  it('keeps what is no credential', () => {
    const fields = { user: 'ada', status: 401, path: '/v1/charge', keyCount: 3, monkey: 'banana' }
    expect(redactSecrets(fields)).toEqual(fields)
  })

  it('looks deep, and shows nothing deeper than it looks', () => {
    const deep = {
      a: {
        b: { c: { d: { e: { password: 'SECRET', f: { g: { h: { i: { token: 'SECRET' } } } } } } } },
      },
    }
    const text = JSON.stringify(redactSecrets(deep))
    expect(text).not.toMatch(/SECRET/)
    expect(text).toMatch(/"password":"\[Redacted\]"/)
  })

  it('masks bearer tokens and JWTs inside messages and stacks', () => {
    const error = new Error(`jwt rejected: ${JWT} (sent as "Bearer ${JWT}")`)
    const shown = JSON.stringify(redactSecrets({ message: error.message, stack: error.stack }))
    expect(shown).not.toMatch(/eyJ|SECRET|c2lnbmF0dXJl/)
    expect(shown).toMatch(/jwt rejected: \[Redacted\] \(sent as \\"Bearer \[Redacted\]\\"\)/)
  })

  it('masks credential fields of a body kept as text, JSON or form', () => {
    const shown = redactSecrets({
      json: '{"user":"ada","password":"hunter2","nested":{"api_key":"hunter3"}}',
      form: 'grant_type=password&username=ada&password=hunter2&client_secret=hunter3',
    })
    expect(shown).toEqual({
      json: '{"user":"ada","password":"[Redacted]","nested":{"api_key":"[Redacted]"}}',
      form: 'grant_type=password&username=ada&password=[Redacted]&client_secret=[Redacted]',
    })
  })

  it('one rule for names, whether keys, header lines, JSON or form fields; name-value lists too', () => {
    const long = 'k'.repeat(1500)
    const shown = redactSecrets({
      rawHeaders: [
        'Content-Type',
        'text/plain',
        'Set-Cookie',
        'sid=hunter2',
        'X-Amz-Security-Token',
        'hunter3',
      ],
      head: 'GET / HTTP/1.1\r\nX-Amz-Security-Token: hunter4\r\nPrivate-Token: hunter5\r\nHost: a.example',
      json: `{"type":"service_account","private_key":"hunter6","client_secret":"${long}"}`,
      cut: `{"user":"ada","password":"hunter7`,
    })
    expect(JSON.stringify(shown)).not.toMatch(/hunter|kkkk/)
    expect(shown).toMatchObject({
      rawHeaders: [
        'Content-Type',
        'text/plain',
        'Set-Cookie',
        '[Redacted]',
        'X-Amz-Security-Token',
        '[Redacted]',
      ],
      head: 'GET / HTTP/1.1\r\nX-Amz-Security-Token: [Redacted]\r\nPrivate-Token: [Redacted]\r\nHost: a.example',
      json: '{"type":"service_account","private_key":"[Redacted]","client_secret":"[Redacted]"}',
      cut: '{"user":"ada","password":"[Redacted]"',
    })
  })

  it('cuts a huge or hostile text instead of searching all of it', () => {
    // Shapes that make careless patterns backtrack: runs of token characters without the
    // separator a pattern waits for.
    for (const hostile of [
      'eyJ-'.repeat(250_000),
      'tokentoken'.repeat(100_000),
      '"'.repeat(1_000_000),
    ]) {
      const shown = redactSecrets({ message: hostile }) as { message: string }
      expect(shown.message).toMatch(/… \[\d+ more characters\]$/)
      expect(shown.message.length).toBeLessThan(17 * 1024)
    }
  })

  it('the development logger masks them in an error message and its stack too', () => {
    let out = ''
    const log = devLogger('debug', (line) => void (out += line + '\n'))
    log.error({ err: new Error(`upstream said: Authorization: Bearer ${JWT}`) }, 'Unhandled error')
    expect(out).not.toMatch(/eyJ|c2lnbmF0dXJl/)
    expect(out).toMatch(/upstream said: Authorization: Bearer \[Redacted\]/)
  })
})
