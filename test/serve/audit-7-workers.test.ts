/**
 * `fw serve --workers`, audit 7: the primary gives up (one error line, exit 1) once replacement
 * workers keep failing to start and none is left serving, instead of restarting them forever
 * while the port refuses every connection; a worker that crashes during its drain makes the stop
 * exit 1, as a single process does; under --watch an error the routes file leaves uncaught in the
 * primary keeps the server running, as it keeps each worker running; the throttle counters the
 * primary holds outlive the workers it replaces mid-window; a message that wants no answer and
 * whose answer fails (an app's own process.send with fw's tag) no longer ends the primary.
 */
import { execFileSync } from 'node:child_process'
import cluster, { type Worker } from 'node:cluster'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerWorkers } from '../../src/runtime/cluster-ipc.js'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { serveApp, type ServedApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

// BREAK: a worker started once that file exists throws at load (as one whose routes import a
// module that throws). PRIMARY_THROWS: once that file exists, the primary throws from a timer.
const ROUTES = `import cluster from 'node:cluster'
import { existsSync } from 'node:fs'
const { BREAK, PRIMARY_THROWS } = process.env
if (cluster.isWorker && BREAK && existsSync(BREAK)) throw new Error('cannot start here')
if (cluster.isPrimary && PRIMARY_THROWS) {
  const poll = setInterval(() => {
    if (!existsSync(PRIMARY_THROWS)) return
    clearInterval(poll)
    throw new Error('late in the primary')
  }, 50)
  poll.unref()
}
export default (r) => {
  r.get('/hello', () => ({ pid: process.pid }))
  r.get('/limited', () => ({ pid: process.pid })).withMiddleware('throttle:5,60')
  r.get('/crash-while-slow', () => {
    console.log('slow started')
    setTimeout(() => { throw new Error('boom while draining') }, 300)
    return new Promise((done) => setTimeout(() => done({ slow: true }), 1000))
  })
}
`

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

async function waitFor(check: () => boolean | Promise<boolean>, app: ServedApp): Promise<void> {
  const until = Date.now() + 9_000
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out; server output:\n${app.output()}`)
    await sleep(50)
  }
}

/** The primary's children: its workers (none for a moment while they are replaced). */
function workersOf(app: ServedApp): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(app.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number)
  } catch {
    return []
  }
}

const gone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

const answers = (app: ServedApp): Promise<boolean> =>
  fetch(`${app.url}/hello`).then(
    (r) => r.ok,
    () => false,
  )

describe('fw serve --workers, audit 7', () => {
  it('gives up with one error line and exit 1 once replacements keep failing to start and none serves', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const env = { BREAK: join(dir, 'break') }
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2'], { cwd: dir, env })
    writeFileSync(env.BREAK, '')
    for (const pid of workersOf(app)) process.kill(pid, 'SIGKILL')
    try {
      await waitFor(() => gone(app.pid), app)
    } finally {
      // A primary that restarts them forever would outlive the test.
      if (!gone(app.pid)) process.kill(app.pid, 'SIGKILL')
    }
    expect(await app.stop(), app.output()).toBe(1)
    const output = app.output()
    expect(output).toMatch(
      /\nerror 5 workers in a row stopped while starting \(the last: its error above\), and none is left serving \[FW_SERVE_WORKER\]\n {2}hint: /,
    )
    // Each worker's own error is the routes file's, not "a bug in fw", and without a stack.
    expect(output).toMatch(
      /error routes\.mjs threw while a worker loaded it: cannot start here \[FW_ROUTES_LOAD\]/,
    )
    expect(output).not.toMatch(/bug in fw|\n\s+at /)
  }, 20_000)

  it('exits 1 when a worker crashes during its drain, the request in flight still answered', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2'], { cwd: dir })
    const slow = fetch(`${app.url}/crash-while-slow`)
    // In flight: a worker has started it.
    await expect.poll(() => app.output().includes('slow started'), { timeout: 10_000 }).toBe(true)
    const exited = app.stop()
    expect(await (await slow).json()).toEqual({ slow: true })
    expect(await exited, app.output()).toBe(1)
    expect(app.output()).toMatch(/\nworker exited \(1\) while stopping\n/)
  }, 20_000)

  it('under --watch, an error the routes file leaves uncaught in the primary is logged and the server keeps running', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const env = { PRIMARY_THROWS: join(dir, 'throw'), LOG_LEVEL: 'error', LOG_FORMAT: 'json' }
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2', '--watch'], {
      cwd: dir,
      env,
    })
    writeFileSync(env.PRIMARY_THROWS, '')
    await waitFor(() => /late in the primary/.test(app.output()), app)
    expect(app.output()).toMatch(/fw serve --watch keeps running/)
    await sleep(200)
    expect(await answers(app), app.output()).toBe(true)
    expect(await app.stop(), app.output()).toBe(0)
  }, 20_000)

  it('keeps the throttle counters when every worker is replaced mid-window', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2'], { cwd: dir })
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${app.url}/limited`)).status).toBe(200)
      const before = workersOf(app)
      for (const pid of before) process.kill(pid, 'SIGKILL')
      await waitFor(async () => {
        const now = workersOf(app)
        return now.length === 2 && !now.some((pid) => before.includes(pid)) && answers(app)
      }, app)
      // Fresh connections, so the requests spread over both new workers.
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${app.url}/limited`, { headers: { connection: 'close' } }).then((r) => r.status),
        ),
      )
      expect(statuses.filter((s) => s === 200)).toHaveLength(2)
      expect(statuses.filter((s) => s === 429)).toHaveLength(18)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 20_000)

  it("drops a failed answer to a message that wants none, instead of the primary's unhandled rejection", async () => {
    const rejections: unknown[] = []
    const onRejection = (error: unknown): number => rejections.push(error)
    process.on('unhandledRejection', onRejection)
    const stop = answerWorkers('fw:audit-7', () => {
      throw new Error('no such call')
    })
    try {
      const worker = { isConnected: () => true, send: () => true } as unknown as Worker
      cluster.emit('message', worker, { tag: 'fw:audit-7', op: 'revoke', id: 0, from: 'app' })
      await sleep(50)
      expect(rejections).toEqual([])
    } finally {
      stop()
      process.off('unhandledRejection', onRejection)
    }
  })
})
