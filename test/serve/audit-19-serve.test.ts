/**
 * Audit 19 of how apps are run: the production `server.mjs` that `fw init` scaffolds stopped
 * accepting at SIGTERM but answered every request on a keep-alive connection with
 * `Connection: keep-alive`, so a client that kept its connection busy (a load balancer's pool)
 * kept the process serving, and running, for as long as it went on; and it ran with Node's
 * default timeouts (idle keep-alive connections closed after 5 s, under the 60 s of common load
 * balancers; slow headers allowed 60 s and more), not the ones `fw serve` sets (65 s, 20 s).
 * And `fw serve --watch` whose esbuild service process died (killed, crashed) never reloaded
 * again: every rebuild failed with "The service is no longer running", told as a syntax error.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject, REPO_ROOT, runFw } from '../support/project.js'
import { listeningPort, serveApp } from '../support/server.js'

const ROUTES = `import { defineRoutes } from 'fw'
export default defineRoutes((r) => {
  r.get('/', () => ({ hello: 'world' }), 'home')
  r.get('/slow', async () => {
    console.log('slow started')
    await new Promise((done) => setTimeout(done, 700))
    return { slow: true }
  }, 'slow')
})
`

let dir: string | undefined
const children: ChildProcess[] = []

/** `fw init`, the routes above, `fw route:cache build`: once for the file. */
async function app(): Promise<string> {
  if (dir !== undefined) return dir
  assertBuilt()
  const made = join(makeProject(), 'app')
  expect((await runFw(['init', made], { cwd: REPO_ROOT })).code).toBe(0)
  mkdirSync(join(made, 'node_modules'))
  symlinkSync(REPO_ROOT, join(made, 'node_modules', 'fw'), 'dir')
  writeFileSync(join(made, 'routes.ts'), ROUTES)
  expect((await runFw(['route:cache', 'build'], { cwd: made })).code).toBe(0)
  return (dir = made)
}

interface Started {
  child: ChildProcess
  port: number
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** What it printed so far. */
  output: () => string
}

async function startServer(): Promise<Started> {
  const at = await app()
  const child = spawn(process.execPath, [join(at, 'server.mjs')], {
    cwd: at,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent' },
  })
  children.push(child)
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const port = await listeningPort(child)
  return { child, port, exited, output: () => output }
}

function get(
  port: number,
  path: string,
  agent: Agent,
): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }))
    })
      .on('error', reject)
      .end()
  })
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

afterAll(() => cleanupProjects())

describe('the scaffolded server.mjs, stopping', () => {
  it('exits after SIGTERM although a keep-alive client keeps its connection busy: the response in flight says Connection: close', async () => {
    const { child, port, exited, output } = await startServer()
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    // One connection, a request always in flight on it, as a load balancer's pool keeps one.
    let going = true
    const answers: { status: number; connection: string | undefined }[] = []
    const loop = (async () => {
      while (going) {
        try {
          answers.push(await get(port, '/slow', agent))
        } catch {
          return // refused or closed once the server is gone
        }
      }
    })()
    // A request in flight: the handler has started.
    await expect.poll(() => output().includes('slow started'), { timeout: 10_000 }).toBe(true)
    child.kill('SIGTERM')
    const outcome = await Promise.race([
      exited,
      new Promise((done) => setTimeout(() => done('still running 5 s after SIGTERM'), 5_000)),
    ])
    going = false
    agent.destroy()
    await loop
    expect(outcome).toEqual({ code: 0, signal: null })
    // The request in flight at the signal was answered, and told the client to close.
    expect(answers[0]).toEqual({ status: 200, connection: 'close' })
  }, 30_000)
})

describe('the scaffolded server.mjs, timeouts', () => {
  it('keeps an idle keep-alive connection past 5 s (65 s, as fw serve) and cuts a client that sends its headers slowly after 20 s', async () => {
    const { port } = await startServer()
    const events: string[] = []
    // Idle: one request answered, then nothing.
    const idle = connect(port, '127.0.0.1')
    idle.on('close', () => events.push('idle closed'))
    idle.on('error', () => {})
    idle.resume()
    idle.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    // Slowloris: a header line every 2 s, never the blank line.
    const slow = connect(port, '127.0.0.1')
    let slowText = ''
    const slowClosed = new Promise<void>((done) =>
      slow.on('close', () => done(void events.push('slow closed'))),
    )
    slow.setEncoding('utf8').on('data', (chunk: string) => (slowText += chunk))
    slow.on('error', () => {})
    slow.write('GET / HTTP/1.1\r\nHost: x\r\n')
    let n = 0
    const drip = setInterval(() => slow.write(`X-Drip-${n++}: 1\r\n`), 2_000)
    try {
      // Cut at the headers timeout (20 s) though it keeps sending: not Node's (60 s and more).
      await slowClosed
    } finally {
      clearInterval(drip)
      idle.destroy()
      slow.destroy()
    }
    // Five header lines or more came first (10 s), and the idle connection outlived it: past
    // Node's default keep-alive timeout (5 s), which is shorter than a load balancer's (60 s).
    expect(n).toBeGreaterThanOrEqual(5)
    expect(events).toEqual(['slow closed'])
    expect(slowText).toMatch(/^HTTP\/1\.1 408 /)
  }, 40_000)
})

/** The pids of `pid`'s children whose command line mentions `name`. */
function childrenNamed(pid: number, name: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
        return parent === pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(name)
      } catch {
        return false
      }
    })
    .map(Number)
}

describe.runIf(process.platform === 'linux')('fw serve --watch when esbuild dies', () => {
  it('starts another esbuild at the next change and reloads, instead of failing every rebuild', async () => {
    const project = makeProject({
      'routes.mjs': `import { v } from './lib.mjs'
export default (r) => { r.get('/v', () => ({ v }), 'v') }
`,
      'lib.mjs': 'export const v = 1\n',
    })
    const app = await serveApp(['--watch', '--routes', 'routes.mjs'], { cwd: project })
    try {
      const [esbuild] = childrenNamed(app.pid, 'esbuild')
      expect(esbuild).toBeDefined()
      process.kill(esbuild!, 'SIGKILL')
      execFileSync('sleep', ['0.3'])
      writeFileSync(join(project, 'lib.mjs'), 'export const v = 2\n')
      const deadline = Date.now() + 10_000
      let body = ''
      while (Date.now() < deadline) {
        body = await (await fetch(`${app.url}/v`)).text()
        if (body.includes('2')) break
        await new Promise((done) => setTimeout(done, 200))
      }
      expect(app.output()).not.toContain('The service is no longer running')
      expect(JSON.parse(body)).toEqual({ v: 2 })
      expect(app.output()).toContain('reloaded 1 route (changed: lib.mjs)')
    } finally {
      expect(await app.stop()).toBe(0)
    }
  }, 30_000)
})
