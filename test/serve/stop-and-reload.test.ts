/**
 * Regressions of `fw serve`, run as a user runs it (the real binary, real HTTP): how it stops on
 * repeated signals, what keep-alive clients are told while it drains, how --watch orders a burst
 * of edits and names what changed, and what a worker replacing a crashed one serves after an edit
 * broke the routes file.
 */
import { writeFileSync } from 'node:fs'
import { Agent, get } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { serveApp, workerPids, type ServedApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = (message = 'first'): string => `import { message } from './message.mjs'
export default (r) => {
  r.get('/message', () => ({ message, pid: process.pid }), 'message')
  r.get('/slow', () => {
    console.log('slow started')
    return new Promise((done) => setTimeout(() => done({ slow: true }), 800))
  }, 'slow')
  // Never answers, and holds no timer.
  r.get('/hang', () => {
    console.log('hang started')
    return new Promise(() => {})
  }, 'hang')
  r.get('/crash', () => { setImmediate(() => process.exit(3)); return { bye: true } }, 'crash')
}
`
const MESSAGE = (text: string): string => `export const message = ${JSON.stringify(text)}\n`

function project(): string {
  return makeProject({ 'routes.mjs': ROUTES(), 'message.mjs': MESSAGE('first') })
}

/** Polls until `check` holds; fails with the server's output after 40 s. */
async function waitFor(check: () => boolean | Promise<boolean>, app: ServedApp): Promise<void> {
  const until = Date.now() + 40_000
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out; server output:\n${app.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

interface Answer {
  status: number
  connection: string | undefined
  body: Record<string, unknown>
}

/** One GET; `agent` false opens a fresh connection (so a cluster may give it to any worker). */
function getJson(url: string, agent: Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          body: JSON.parse(text) as Record<string, unknown>,
        }),
      )
    }).on('error', reject)
  })
}

/** Resolves with the exit code once the process is gone. */
function exited(app: ServedApp): Promise<number | null> {
  return new Promise((resolve) => {
    const poll = (): void => {
      try {
        process.kill(app.pid, 0)
        setTimeout(poll, 50)
      } catch {
        resolve(app.stop())
      }
    }
    poll()
  })
}

describe('fw serve stopping', () => {
  it('keeps draining on a second SIGTERM: the in-flight request still gets its answer, exit 0', async () => {
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: project() })
    const slow = getJson(`${app.url}/slow`)
    await waitFor(() => app.output().includes('slow started'), app)
    process.kill(app.pid, 'SIGTERM')
    await waitFor(() => /stopping: finishing in-flight requests/.test(app.output()), app)
    process.kill(app.pid, 'SIGTERM')
    expect((await slow).body).toEqual({ slow: true })
    expect(await exited(app), app.output()).toBe(0)
  })

  it('cuts the in-flight requests off at a second SIGINT (Ctrl-C twice), says so once, exit 0', async () => {
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: project() })
    const hanging = getJson(`${app.url}/hang`).then(
      () => 'answered',
      () => 'cut off',
    )
    await waitFor(() => app.output().includes('hang started'), app)
    process.kill(app.pid, 'SIGINT')
    await waitFor(() => /Ctrl-C again to cut them off/.test(app.output()), app)
    process.kill(app.pid, 'SIGINT')
    expect(await hanging).toBe('cut off')
    expect(await exited(app), app.output()).toBe(0)
    expect(
      app.output().match(/cut off the in-flight requests still running at the second Ctrl-C/g),
    ).toHaveLength(1)
  })

  it('answers a request in flight at SIGTERM with Connection: close, so a keep-alive client does not reuse the closing connection', async () => {
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: project() })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      expect((await getJson(`${app.url}/message`, agent)).connection).toBe('keep-alive')
      const slow = getJson(`${app.url}/slow`, agent)
      await waitFor(() => app.output().includes('slow started'), app)
      process.kill(app.pid, 'SIGTERM')
      const answer = await slow
      expect(answer.body).toEqual({ slow: true })
      expect(answer.connection).toBe('close')
      expect(await exited(app), app.output()).toBe(0)
    } finally {
      agent.destroy()
    }
  })
})

describe('fw serve --watch', () => {
  it('serves the last of a burst of edits, and names the changed import relative to the working folder', async () => {
    const dir = project()
    const app = await serveApp(['--routes', 'routes.mjs', '--watch'], { cwd: dir })
    try {
      for (let i = 1; i <= 8; i++) {
        writeFileSync(join(dir, 'message.mjs'), MESSAGE(`edit ${i}`))
        await new Promise((r) => setTimeout(r, 30))
      }
      await waitFor(
        async () => (await getJson(`${app.url}/message`)).body.message === 'edit 8',
        app,
      )
      // Once the last edit is served, no reload still running swaps an older one back in.
      await new Promise((r) => setTimeout(r, 1500))
      expect((await getJson(`${app.url}/message`)).body.message).toBe('edit 8')
      expect(app.output()).toMatch(/^reloaded 4 routes \(changed: message\.mjs\)$/m)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('with --workers, a worker replacing a crashed one after an edit broke the routes file serves the last good routes', async () => {
    const dir = project()
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2', '--watch'], {
      cwd: dir,
    })
    try {
      writeFileSync(join(dir, 'message.mjs'), MESSAGE('good'))
      await waitFor(() => /reloaded 4 routes/.test(app.output()), app)
      writeFileSync(join(dir, 'routes.mjs'), 'export default (r) => {\n  r.get(\n')
      await waitFor(() => /keeping the running routes/.test(app.output()), app)
      const before = workerPids(app.pid)
      expect(before).toHaveLength(2)
      await getJson(`${app.url}/crash`)
      await waitFor(() => /worker exited \(3\); starting another/.test(app.output()), app)
      // Fresh connections until one reaches the replacement.
      let answer: Answer | undefined
      await waitFor(async () => {
        answer = await getJson(`${app.url}/message`).catch(() => undefined)
        return answer !== undefined && !before.includes(answer.body.pid as number)
      }, app)
      expect(answer!.body.message).toBe('good')
      expect(app.output()).not.toMatch(/worker exited \(1\)/)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)
})
