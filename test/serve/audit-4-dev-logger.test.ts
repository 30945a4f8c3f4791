/**
 * What a developer's terminal shows when fw serve's readable logger writes data it does not
 * control: control characters (line breaks, ESC and the 8-bit CSI) escaped so that no log line
 * can be forged and no terminal escape runs, and credentials in a logged `err` redacted as the
 * JSON logger redacts them.
 */
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { devLogger } from '../../src/serve/dev-logger.js'
import { startServer } from '../../src/serve/server.js'
import { bootKernel, cleanupTempDirs } from '../runtime/kernel/support.js'

afterAll(cleanupTempDirs)

// The logger's own colours: on whatever the test runner's terminal is, so they are checked apart.
const COLOURS = /\u001b\[\d+m/g

function capture(): { lines: string[]; log: ReturnType<typeof devLogger> } {
  const lines: string[] = []
  return { lines, log: devLogger('debug', (line) => lines.push(line)) }
}

/** The text a developer reads: the line without the time and the logger's own colour codes. */
function shown(line: string): string {
  return line.replace(COLOURS, '').slice(9)
}

describe('the dev logger prints data from the app escaped', () => {
  it('escapes a line break in a message, so a forged line shows as part of the real one', () => {
    const { lines, log } = capture()
    log.error({ path: '/x' }, 'Payment failed\n12:00:00 INFO  payment accepted')
    expect(lines).toHaveLength(1)
    expect(shown(lines[0]!)).toBe('ERROR Payment failed\\n12:00:00 INFO  payment accepted path=/x')
  })

  it('escapes ESC sequences, the 8-bit CSI and other C0/C1 controls in a string entry and fields', () => {
    const { lines, log } = capture()
    log.info('clear\u001b[2J\u001b]0;pwned\u0007')
    log.warn({ user: 'a\u009b31mred\rb', at: 'tab\there\u0000\u007f\u0085' }, 'login')
    expect(shown(lines[0]!)).toBe('INFO  clear\\x1b[2J\\x1b]0;pwned\\x07')
    expect(shown(lines[1]!)).toBe('WARN  login user=a\\x9b31mred\\rb at=tab\\there\\x00\\x7f\\x85')
  })

  it('keeps only its own colour codes: nothing from the data reaches the terminal as an escape', () => {
    const { lines, log } = capture()
    log.error(
      { err: new Error('boom\u001b[8;1m\u009b2J'), note: { text: '\u009b\u001b' } },
      'x\u001b]0;title\u0007',
    )
    const withoutOwnColours = lines[0]!.replace(COLOURS, '')
    expect(withoutOwnColours).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
  })

  it("escapes an error's message on the line, and shows its message as one stack line below", () => {
    const { lines, log } = capture()
    log.error({ err: new Error('bad input\r\nERROR forged\u001b[0m') }, 'Unhandled error')
    const [first, ...stack] = lines[0]!.split('\n').map((l) => l.replace(COLOURS, ''))
    expect(first!.slice(9)).toBe('ERROR Unhandled error err=bad input\\r\\nERROR forged\\x1b[0m')
    expect(stack[0]).toBe('    Error: bad input\\r\\nERROR forged\\x1b[0m')
    expect(stack[1]).toMatch(/^ {4}\s+at /)
    expect(stack.every((line) => line.startsWith('    '))).toBe(true)
  })

  it('escapes a control character in a stack frame (a file path), line by line', () => {
    const { lines, log } = capture()
    const error = new Error('gone')
    error.stack =
      'Error: gone\n    at load (/srv/a\u001b[2Jb.ts:3:1)\n    at main (/srv/c\rd.ts:1:1)'
    log.error({ err: error }, 'Failed')
    const stack = lines[0]!.replace(COLOURS, '').split('\n').slice(1)
    expect(stack).toEqual([
      '    Error: gone',
      '        at load (/srv/a\\x1b[2Jb.ts:3:1)',
      '        at main (/srv/c\\rd.ts:1:1)',
    ])
  })

  it('escapes field names, JSON values (which leave C1 controls and DEL raw) and Unicode line separators', () => {
    const { lines, log } = capture()
    log.info({ ['k\ney']: 1, obj: { a: 'x\u009by\u007f' }, sep: 'a\u2028b\u202ec' }, 'm')
    expect(shown(lines[0]!)).toBe('INFO  m k\\ney=1 obj={"a":"x\\x9by\\x7f"} sep=a\\u2028b\\u202ec')
  })

  it('shows an error from another realm (vm) as an error, not as {}', () => {
    const { lines, log } = capture()
    const foreign = runInNewContext('new TypeError("from a vm")') as unknown
    log.error({ err: foreign }, 'Unhandled error')
    const [first, second] = lines[0]!.replace(COLOURS, '').split('\n')
    expect(first!.slice(9)).toBe('ERROR Unhandled error err=from a vm')
    expect(second).toBe('    TypeError: from a vm')
  })
})

describe('the dev logger redacts credentials in a logged err, as the JSON logger does', () => {
  it('redacts credential fields of a thrown plain object, down to four levels', () => {
    const { lines, log } = capture()
    const thrown = {
      status: 502,
      password: 'hunter2',
      config: {
        headers: { Authorization: 'Bearer abc', 'X-Api-Key': 'k1', accept: 'json' },
        data: { client_secret: 's3', refresh_token: 'r1', user: 'ann' },
      },
      response: { headers: { 'set-cookie': ['sid=1'] } },
    }
    log.error({ err: thrown }, 'Unhandled error')
    expect(shown(lines[0]!)).toBe(
      'ERROR Unhandled error err=' +
        '{"status":502,"password":"[Redacted]","config":{"headers":{"Authorization":"[Redacted]",' +
        '"X-Api-Key":"[Redacted]","accept":"json"},"data":{"client_secret":"[Redacted]",' +
        '"refresh_token":"[Redacted]","user":"ann"}},"response":{"headers":{"set-cookie":"[Redacted]"}}}',
    )
    expect(lines[0]).not.toMatch(/hunter2|abc|k1|s3|r1|sid=1/)
    expect(thrown.password).toBe('hunter2') // the logged object itself is untouched
  })

  it('redacts inside arrays and after toJSON, and leaves other fields alone', () => {
    const { lines, log } = capture()
    const headers = { toJSON: () => ({ cookie: 'sid=2', host: 'a' }) }
    log.error({ err: [{ token: 't' }, { headers }], password: 'not-an-err-field' }, 'x')
    expect(shown(lines[0]!)).toBe(
      'ERROR x err=[{"token":"[Redacted]"},{"headers":{"cookie":"[Redacted]","host":"a"}}] password=not-an-err-field',
    )
  })

  it('escapes a thrown string as any other text', () => {
    const { lines, log } = capture()
    log.error({ err: 'oops\n\u001b[2J' }, 'Unhandled error')
    expect(shown(lines[0]!)).toBe('ERROR Unhandled error err=oops\\n\\x1b[2J')
  })
})

describe('fw serve with the dev logger, over HTTP', () => {
  it('logs an error whose message a client chose on one escaped line, and a thrown object redacted', async () => {
    const { lines, log } = capture()
    const kernel = await bootKernel(
      (r) => {
        r.get('/boom/{x}', (_req: unknown, x: string) => {
          throw new Error(`bad ${x}`)
        })
        r.get('/upstream', () => {
          throw { status: 502, headers: { authorization: 'Bearer abc' } }
        })
      },
      { log },
    )
    const running = await startServer(kernel, { port: 0, host: '127.0.0.1' })
    try {
      const forged = '/boom/a%0D%0A12:00:00%20INFO%20%20ok%1B%5B2J%C2%9B31m'
      expect((await fetch(running.url + forged)).status).toBe(500)
      expect((await fetch(`${running.url}/upstream`)).status).toBe(500)
    } finally {
      await running.close()
    }
    const [boom, upstream] = lines.map((line) => line.replace(COLOURS, ''))
    expect(boom!.split('\n')[0]!.slice(9)).toMatch(
      /^ERROR Unhandled error err=bad a\\r\\n12:00:00 INFO {2}ok\\x1b\[2J\\x9b31m method=GET path=\/boom\/a%0D%0A12:00:00%20INFO%20%20ok%1B%5B2J%C2%9B31m request_id=[\w-]+ trace_id=[\da-f]{32}$/,
    )
    expect(boom!.split('\n')[1]).toBe('    Error: bad a\\r\\n12:00:00 INFO  ok\\x1b[2J\\x9b31m')
    expect(upstream!.slice(9)).toMatch(
      /^ERROR Unhandled error err=\{"status":502,"headers":\{"authorization":"\[Redacted\]"\}\} method=GET path=\/upstream request_id=[\w-]+ trace_id=[\da-f]{32}$/,
    )
  })
})
