/**
 * Output whose reader has gone (a closed terminal: EIO; a closed pipe: EPIPE; a closed
 * descriptor: EBADF): writes to it are dropped quietly, never an uncaught exception, and the crash
 * handler cannot turn a log output that fails into an endless loop of errors. See
 * closed-terminal.test.ts for `fw serve` on a real closed terminal.
 */
import { Writable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { isOutputGone, writeLine } from '../../src/shared/closed-output.js'
import { assertBuilt, REPO_ROOT, runScript } from '../support/project.js'

beforeAll(assertBuilt)

const dist = (file: string): string => pathToFileURL(join(REPO_ROOT, 'dist', file)).href

/** A stream whose every write fails with `code`, as a closed terminal's does with EIO. */
function failing(code: string): Writable & { attempts: number } {
  const stream = new Writable({
    write(_chunk, _encoding, done) {
      stream.attempts++
      done(Object.assign(new Error(`write ${code}`), { code, syscall: 'write' }))
    },
  }) as Writable & { attempts: number }
  stream.attempts = 0
  return stream
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20))

describe('writeLine', () => {
  // EIO only once a terminal fw started on was closed (closed-terminal.test.ts): from a file (a
  // failing disk) it is an error that must surface.
  it('takes EIO for a gone output only once a terminal was closed', () => {
    expect(isOutputGone(Object.assign(new Error('write EIO'), { code: 'EIO' }))).toBe(false)
  })

  for (const code of ['EPIPE', 'EBADF']) {
    it(`drops what is written after a write failed with ${code}`, async () => {
      const stream = failing(code)
      writeLine(stream, 'first')
      await tick()
      writeLine(stream, 'second')
      writeLine(stream, 'third')
      await tick()
      expect(stream.attempts).toBe(1)
    })
  }

  it('lets other write errors surface', async () => {
    const stream = failing('ENOSPC')
    expect(isOutputGone(Object.assign(new Error('full'), { code: 'ENOSPC' }))).toBe(false)
    const thrown = new Promise<unknown>((resolve) => {
      const emit = stream.emit.bind(stream)
      stream.emit = (event: string, ...args: unknown[]): boolean => {
        try {
          return emit(event, ...args)
        } catch (error) {
          resolve(error)
          return true
        }
      }
    })
    writeLine(stream, 'first')
    expect(await thrown).toMatchObject({ code: 'ENOSPC' })
  })
})

describe("the default logger's stdout", () => {
  it('drops log lines once stdout is gone (EBADF), without an uncaught exception', async () => {
    const script = `
      import { closeSync } from 'node:fs'
      import { createLogger } from ${JSON.stringify(dist('runtime/logger.js'))}
      process.on('uncaughtException', (error) => {
        process.stderr.write('uncaught ' + error.code + '\\n')
        process.exit(3)
      })
      closeSync(1)
      const log = createLogger('production')
      log.info('first')
      setTimeout(() => log.error({ err: new Error('x') }, 'second'), 50)
      setTimeout(() => process.stderr.write('alive\\n'), 200)
    `
    const result = await runScript(script, { cwd: REPO_ROOT })
    expect(result.stderr).toBe('alive\n')
    expect(result.code).toBe(0)
  })
})

describe('the crash handler and a log output that fails', () => {
  // A logger whose output has gone: each line's write fails later, as an uncaught EPIPE error (a
  // closed terminal's EIO is the same, closed-terminal.test.ts). The process must not log error after error for ever.
  const script = (keepRunning: boolean): string => `
    import { listenForCrash } from ${JSON.stringify(dist('serve/crash.js'))}
    let lines = 0
    const log = {
      debug() {}, info() {}, warn() {},
      error() {
        lines++
        setImmediate(() => {
          throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE', syscall: 'write' })
        })
      },
    }
    process.on('exit', (code) => process.stderr.write('lines ' + lines + ' exit ' + code + '\\n'))
    // A loop, were it one, is ended here: exit 9.
    setTimeout(() => process.exit(9), 3000).unref()
    const crash = listenForCrash(() => log, { keepRunning: ${keepRunning} })
    void crash.received.then(() => setTimeout(() => process.exit(1), 1000))
    setTimeout(() => { throw new Error('the app threw') }, 10)
  `

  it('exits 1 at once on a second error while the first one ends the process', async () => {
    const result = await runScript(script(false), { cwd: REPO_ROOT })
    expect(result.stderr).toMatch(/^lines 2 exit 1$/m)
    expect(result.code).toBe(1)
  })

  // Any second error ended the process at once, cutting off the drain's in-flight requests.
  it('lets the drain finish after a second error that is not a failing output', async () => {
    const result = await runScript(
      `
      import { listenForCrash } from ${JSON.stringify(dist('serve/crash.js'))}
      let lines = 0
      const log = { debug() {}, info() {}, warn() {}, error() { lines++ } }
      process.on('exit', (code) => process.stderr.write('lines ' + lines + ' exit ' + code + '\\n'))
      const crash = listenForCrash(() => log)
      void crash.received.then(() =>
        setTimeout(() => { process.stderr.write('drained\\n'); process.exit(1) }, 300),
      )
      setTimeout(() => { throw new Error('the app threw') }, 10)
      setTimeout(() => { throw new Error('and again') }, 50)
    `,
      { cwd: REPO_ROOT },
    )
    expect(result.stderr).toMatch(/^drained\nlines 2 exit 1$/m)
    expect(result.code).toBe(1)
  })

  it('under --watch, logs the failing output once and then drops it', async () => {
    const result = await runScript(script(true), { cwd: REPO_ROOT })
    expect(result.stderr).toMatch(/^lines 2 exit 0$/m)
    expect(result.code).toBe(0)
  })
})
