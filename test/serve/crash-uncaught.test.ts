/**
 * What `fw serve` does when the app leaves an error uncaught after answering (a timer that
 * throws, a promise rejected with nobody to handle it): the error is logged once through the
 * app's logger, in-flight requests get a short drain and the process exits 1, as Node's default
 * would, instead of Node's raw crash headed by fw's own rethrow. A --workers worker that dies so
 * is replaced by the primary.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { get } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, FW_BIN, makeProject } from '../support/project.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

// A server a failed test left running is stopped by its PID.
const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL')
  running.clear()
})

const ROUTES = `export default (r) => {
  r.get('/pid', () => ({ pid: process.pid }), 'pid')
  r.get('/late', () => {
    setTimeout(() => {
      const error = new Error('late \\x1b[31mred\\nsecond line')
      error.password = 'hunter2'
      throw error
    }, 20)
    return { answered: true }
  }, 'late')
  r.get('/reject', () => {
    Promise.reject(new Error('nobody waits for me'))
    return { answered: true }
  }, 'reject')
  r.get('/slow', () => {
    console.log('slow started')
    return new Promise((done) => setTimeout(() => done({ slow: true }), 600))
  }, 'slow')
  r.get('/slow-throws', () => {
    console.log('slow started')
    setTimeout(() => { throw new Error('thrown while draining') }, 300)
    return new Promise((done) => setTimeout(() => done({ slow: true }), 600))
  }, 'slow-throws')
}
`

interface Served {
  port: number
  pid: number
  /** Raw output, control characters and all. */
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

/** Spawns `fw serve --port 0 ...args` with colours off and resolves once the banner is out. */
function serve(args: string[], env: Record<string, string> = {}, routes = ROUTES): Promise<Served> {
  const cwd = makeProject({ 'routes.mjs': routes })
  const child = spawn(
    process.execPath,
    [FW_BIN, 'serve', '--port', '0', '--routes', 'routes.mjs', ...args],
    {
      cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', LOG_LEVEL: 'info', ...env },
    },
  )
  running.add(child)
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${stdout}${stderr}`)), 30_000)
    const onData = (): void => {
      const found = /fw serve → http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)
      if (!found) return
      clearTimeout(timer)
      resolve({
        port: Number(found[1]),
        pid: child.pid!,
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
      })
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), onData()))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    void exited.then((code) => reject(new Error(`exited ${code}:\n${stdout}${stderr}`)))
  })
}

function getJson(port: number, path: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time (agent: false), so that a cluster may give it to any worker;
    // sent as by a trusted proxy in front, which production's HTTPS redirect expects.
    const headers = { 'x-forwarded-proto': 'https' }
    get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        try {
          resolve(JSON.parse(text) as Record<string, unknown>)
        } catch {
          reject(new Error(`${res.statusCode} ${text}`))
        }
      })
    }).on('error', reject)
  })
}

/** Exits within 10 s, else the test fails with the output so far. */
async function exitCode(app: Served): Promise<number | null> {
  const timeout = new Promise<'still running'>((r) => setTimeout(() => r('still running'), 10_000))
  const code = await Promise.race([app.exited, timeout])
  if (code === 'still running') process.kill(app.pid, 'SIGKILL')
  expect(code, app.stdout() + app.stderr()).not.toBe('still running')
  return code as number | null
}

const JSON_LINES = (text: string): Record<string, any>[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>)

describe('fw serve and an uncaught exception after answering', () => {
  it('in production logs one JSON line (credentials redacted, control characters escaped) and exits 1, without a raw crash', async () => {
    const app = await serve([], { APP_ENV: 'production', JWT_SECRET: 'x'.repeat(40) })
    expect(await getJson(app.port, '/late')).toEqual({ answered: true })
    expect(await exitCode(app)).toBe(1)
    const errors = JSON_LINES(app.stdout()).filter((entry) => entry.level === 50)
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'Uncaught exception: the server stops (exit code 1)',
        err: expect.objectContaining({
          type: 'Error',
          message: 'late \u001b[31mred\nsecond line',
          password: '[Redacted]',
        }),
      }),
    ])
    expect(app.stdout()).not.toContain('\u001b')
    expect(app.stdout()).not.toContain('hunter2')
    expect(app.stderr()).toBe('')
  })

  it('leaves the error to the app when it listens for the event itself, as Node does', async () => {
    const own = `process.on('unhandledRejection', (e) => console.error('app saw:', e.message))\n`
    const app = await serve([], {}, own + ROUTES)
    expect(await getJson(app.port, '/reject')).toEqual({ answered: true })
    await new Promise((done) => setTimeout(done, 300))
    expect(await getJson(app.port, '/pid')).toEqual({ pid: app.pid })
    expect(app.stderr()).toContain('app saw: nobody waits for me')
    expect(app.stdout()).not.toContain('the server stops')
    process.kill(app.pid, 'SIGTERM')
    expect(await exitCode(app)).toBe(0)
  })

  it('lets a request in flight finish before it exits', async () => {
    const app = await serve([], { APP_ENV: 'production', JWT_SECRET: 'x'.repeat(40) })
    const slow = getJson(app.port, '/slow')
    // In flight: the handler has started.
    await expect.poll(() => app.stdout().includes('slow started'), { timeout: 10_000 }).toBe(true)
    await getJson(app.port, '/late')
    expect(await slow).toEqual({ slow: true })
    expect(await exitCode(app)).toBe(1)
  })
})

describe('fw serve and an uncaught exception while it stops', () => {
  it('logs it, still lets the request in flight finish, and exits 1, not 0', async () => {
    const app = await serve([], { APP_ENV: 'production', JWT_SECRET: 'x'.repeat(40) })
    const slow = getJson(app.port, '/slow-throws')
    // In flight: the handler has started.
    await expect.poll(() => app.stdout().includes('slow started'), { timeout: 10_000 }).toBe(true)
    process.kill(app.pid, 'SIGTERM')
    expect(await slow).toEqual({ slow: true })
    expect(await exitCode(app)).toBe(1)
    const errors = JSON_LINES(app.stdout()).filter((entry) => entry.level === 50)
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'Uncaught exception: the server stops (exit code 1)',
        err: expect.objectContaining({ message: 'thrown while draining' }),
      }),
    ])
  })
})

describe('fw serve --watch and an uncaught exception', () => {
  it('logs it and keeps serving, as a development server: the fix, once saved, is reloaded', async () => {
    const app = await serve(['--watch'], { LOG_FORMAT: 'pretty', JWT_SECRET: 'x'.repeat(40) })
    expect(await getJson(app.port, '/late')).toEqual({ answered: true })
    expect(await getJson(app.port, '/reject')).toEqual({ answered: true })
    await new Promise((r) => setTimeout(r, 300))
    expect(await getJson(app.port, '/pid')).toEqual({ pid: app.pid })
    const errors = app
      .stdout()
      .split('\n')
      .filter((line) => / ERROR /.test(line))
    // In either order: /late's timer may fire after /reject's rejection.
    expect(errors).toHaveLength(2)
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          / ERROR Uncaught exception: fw serve --watch keeps running \(without --watch the server stops\) err=late/,
        ),
        expect.stringMatching(
          / ERROR Unhandled promise rejection: fw serve --watch keeps running \(without --watch the server stops\) err=nobody waits for me$/,
        ),
      ]),
    )
    process.kill(app.pid, 'SIGTERM')
    expect(await exitCode(app)).toBe(0)
  })
})

describe('fw serve and an unhandled rejection', () => {
  it('crashes as Node does since v15, logged by the readable development logger: one ERROR line, its stack below, exit 1', async () => {
    const app = await serve([], { LOG_FORMAT: 'pretty', JWT_SECRET: 'x'.repeat(40) })
    expect(await getJson(app.port, '/reject')).toEqual({ answered: true })
    expect(await exitCode(app)).toBe(1)
    const logged = app.stdout().split('\n').slice(1)
    expect(logged[0]).toMatch(
      /^\d\d:\d\d:\d\d ERROR Unhandled promise rejection: the server stops \(exit code 1\) err=nobody waits for me$/,
    )
    expect(logged[1]).toBe('    Error: nobody waits for me')
    expect(logged.filter((line) => / ERROR /.test(line))).toHaveLength(1)
    expect(app.stderr()).toBe('')
  })
})

describe('fw serve --workers and an uncaught exception in a worker', () => {
  it('the worker logs it and exits 1; the primary starts another and keeps serving', async () => {
    const app = await serve(['--workers', '2'], { JWT_SECRET: 'x'.repeat(40) })
    try {
      expect(await getJson(app.port, '/late')).toEqual({ answered: true })
      const until = Date.now() + 20_000
      while (!/worker exited \(1\); starting another/.test(app.stderr())) {
        if (Date.now() > until) throw new Error(app.stdout() + app.stderr())
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(app.stderr()).toMatch(/^worker exited \(1\); starting another in 0\.1 s$/m)
      expect(app.stderr()).not.toMatch(/throw error|output\.js/)
      const errors = JSON_LINES(app.stdout()).filter((entry) => entry.level === 50)
      expect(errors).toEqual([
        expect.objectContaining({ msg: 'Uncaught exception: the server stops (exit code 1)' }),
      ])
      // Two workers answer again: the replacement included.
      const pids = new Set<unknown>()
      while (pids.size < 2) {
        if (Date.now() > until) throw new Error(app.stdout() + app.stderr())
        pids.add((await getJson(app.port, '/pid')).pid)
      }
      expect(pids).not.toContain(errors[0]!.pid)
    } finally {
      process.kill(app.pid, 'SIGTERM')
    }
    expect(await exitCode(app)).toBe(0)
  })
})
