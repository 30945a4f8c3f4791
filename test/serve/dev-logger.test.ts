/** fw serve's terminal logs: readable lines in development on a terminal, pino JSON otherwise. */
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { devLogger, serveLogger } from '../../src/serve/dev-logger.js'

function capture(level: string): { lines: string[]; log: ReturnType<typeof devLogger> } {
  const lines: string[] = []
  return { lines, log: devLogger(level, (line) => lines.push(stripVTControlCharacters(line))) }
}

describe('devLogger', () => {
  it('writes time, level, message and fields on one line', () => {
    const { lines, log } = capture('debug')
    log.warn({ route: 'users.show', status: 404, tags: ['a'] }, 'No such user')
    log.info('listening')
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d WARN  No such user route=users\.show status=404 tags=\["a"\]$/,
    )
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d INFO  listening$/)
  })

  it("puts an error's message on the line and its stack, indented, below", () => {
    const { lines, log } = capture('debug')
    log.error({ err: new Error('disk gone') }, 'Streaming failed')
    const [first, ...stack] = lines[0]!.split('\n')
    expect(first).toMatch(/ERROR Streaming failed err=disk gone$/)
    expect(stack[0]).toBe('    Error: disk gone')
    expect(stack[1]).toMatch(/^ {4}\s+at /)
  })

  it('drops entries below its level, and everything when silent', () => {
    const { lines, log } = capture('warn')
    log.debug('d')
    log.info('i')
    log.warn('w')
    log.error('e')
    expect(lines.map((l) => l.slice(9))).toEqual(['WARN  w', 'ERROR e'])
    const silent = capture('silent')
    silent.log.error('e')
    expect(silent.lines).toEqual([])
  })

  it('writes a circular field without throwing', () => {
    const { lines, log } = capture('debug')
    const loop: Record<string, unknown> = {}
    loop.self = loop
    log.info({ loop }, 'x')
    expect(lines[0]).toContain('loop=[object Object]')
  })
})

describe('serveLogger', () => {
  it('is readable in development on a terminal, pino JSON (null) in production or off a terminal', () => {
    expect(serveLogger('development', true, undefined)).not.toBeNull()
    expect(serveLogger('development', false, undefined)).toBeNull()
    expect(serveLogger('production', true, undefined)).toBeNull()
  })

  it('follows LOG_FORMAT when it is set', () => {
    expect(serveLogger('production', false, 'pretty')).not.toBeNull()
    expect(serveLogger('development', true, 'json')).toBeNull()
  })
})
