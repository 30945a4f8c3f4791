/**
 * `fw serve` whose terminal is closed while it runs. Without SIGHUP (started with `setsid`, or
 * `& disown`), every write to the closed terminal fails with EIO: those writes were uncaught
 * exceptions, whose log lines failed in turn, for ever (the process spun at full CPU, and no
 * SIGTERM ended it). Now what it would print is dropped: it keeps serving, a SIGTERM drains it and
 * an uncaught error ends it. With SIGHUP (the terminal it was started from is closed), it drains
 * as on SIGTERM. A python3 pty stands in for the terminal.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { get } from 'node:http'
import { createInterface } from 'node:readline'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, FW_BIN, makeProject } from '../support/project.js'

const HAS_PYTHON = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0

beforeAll(assertBuilt)
afterAll(cleanupProjects)

// The driver: runs fw serve on a pty (as its controlling terminal with `ctty`, else only as its
// stdin, stdout and stderr, in a session of its own), says the port once the banner is out, closes
// the terminal on `close`, signals on `kill NAME`, says how fw ended, and on its own stdin's end
// kills fw's process group, workers included.
const DRIVER = String.raw`
import json, os, pty, select, signal, sys, time
spec = json.loads(sys.argv[1])
argv = [spec['node'], spec['fw'], 'serve', '--port', '0', '--routes', 'routes.mjs'] + spec['args']
if spec['ctty']:
    pid, master = pty.fork()
    if pid == 0:
        os.chdir(spec['cwd']); os.execve(argv[0], argv, spec['env'])
else:
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        for fd in (0, 1, 2): os.dup2(slave, fd)
        os.close(slave); os.close(master)
        os.chdir(spec['cwd']); os.execve(argv[0], argv, spec['env'])
    os.close(slave)
def say(obj): sys.stdout.write(json.dumps(obj) + '\n'); sys.stdout.flush()
out = b''
said = False
while True:
    fds = [sys.stdin] + ([master] if master is not None else [])
    ready, _, _ = select.select(fds, [], [], 0.05)
    if master is not None and master in ready:
        try: out += os.read(master, 65536)
        except OSError: pass
        if not said and b'fw serve' in out and b'\n' in out.split(b'fw serve', 1)[1]:
            said = True
            say({'banner': out.decode(errors='replace')})
    if sys.stdin in ready:
        line = sys.stdin.readline()
        if line == '':
            try: os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError: pass
            break
        cmd = line.split()
        if cmd[0] == 'close':
            os.close(master); master = None; say({'closed': True})
        elif cmd[0] == 'kill':
            os.kill(pid, getattr(signal, cmd[1]))
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        say({'code': os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
             'signal': os.WTERMSIG(status) if os.WIFSIGNALED(status) else None})
        try: os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError: pass
        break
`

const ROUTES = `export default (r) => {
  r.get('/', () => ({ ok: true }), 'home')
  r.get('/noisy', () => {
    console.log('to stdout')
    console.error('to stderr')
    return { noisy: true }
  }, 'noisy')
  r.get('/slow', () => new Promise((done) => setTimeout(() => done({ slow: true }), 1500)), 'slow')
  r.get('/throws', () => {
    setTimeout(() => { throw new Error('thrown after the terminal closed') }, 100)
    return { answered: true }
  }, 'throws')
}
`

// Generous: a drain is 10 s at most, what the app left open 5 s more.
const DEADLINE_MS = 25_000

interface Ended {
  code: number | null
  signal: number | null
}

interface OnPty {
  port: number
  send: (command: string) => void
  closed: Promise<void>
  /** How fw ended, or 'running' still at the deadline. */
  ended: (ms?: number) => Promise<Ended | 'running'>
}

const drivers = new Set<ChildProcess>()
afterEach(() => {
  // Its stdin's end has the driver kill fw's process group; then the driver goes.
  for (const driver of drivers) {
    driver.stdin?.end()
    setTimeout(() => driver.exitCode === null && driver.kill('SIGKILL'), 2_000).unref()
  }
  drivers.clear()
})

function serveOnPty(args: string[], ctty: boolean): Promise<OnPty> {
  const cwd = makeProject({ 'routes.mjs': ROUTES })
  const spec = {
    node: process.execPath,
    fw: FW_BIN,
    args,
    cwd,
    ctty,
    env: { ...process.env, LOG_LEVEL: 'info', JWT_SECRET: 'x'.repeat(40) },
  }
  const driver = spawn('python3', ['-c', DRIVER, JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  drivers.add(driver)
  const events: Record<string, unknown>[] = []
  const waiters = new Set<() => void>()
  createInterface({ input: driver.stdout! }).on('line', (line) => {
    events.push(JSON.parse(line) as Record<string, unknown>)
    for (const wake of waiters) wake()
  })
  driver.once('exit', () => {
    for (const wake of waiters) wake()
  })
  const event = (key: string, ms: number): Promise<Record<string, unknown> | undefined> =>
    new Promise((resolve) => {
      const check = (): void => {
        const found = events.find((e) => key in e)
        if (found || driver.exitCode !== null) done(found)
      }
      const timer = setTimeout(() => done(undefined), ms)
      const done = (found: Record<string, unknown> | undefined): void => {
        clearTimeout(timer)
        waiters.delete(check)
        resolve(found)
      }
      waiters.add(check)
      check()
    })
  return event('banner', 30_000).then((banner) => {
    const found = /fw serve → http:\/\/127\.0\.0\.1:(\d+)/.exec(String(banner?.banner ?? ''))
    if (!found) throw new Error(`no banner: ${JSON.stringify(events)}`)
    let closed!: () => void
    const isClosed = new Promise<void>((r) => (closed = r))
    void event('closed', 60_000).then(() => closed())
    return {
      port: Number(found[1]),
      send: (command) => void driver.stdin!.write(command + '\n'),
      closed: isClosed,
      ended: async (ms = DEADLINE_MS) => {
        const end = await event('code', ms)
        return end
          ? { code: end.code as number | null, signal: end.signal as number | null }
          : 'running'
      },
    }
  })
}

function getJson(port: number, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve(JSON.parse(body)))
    }).on('error', reject)
  })
}

async function closeTerminal(app: OnPty): Promise<void> {
  app.send('close')
  await app.closed
}

describe.skipIf(!HAS_PYTHON)('fw serve after its terminal was closed, with no SIGHUP', () => {
  for (const args of [[], ['--workers', '2']]) {
    const name = args.length ? ' (--workers 2)' : ''
    it(
      `keeps serving quietly, and SIGTERM still drains it${name}`,
      { timeout: 60_000 },
      async () => {
        const app = await serveOnPty(args, false)
        await closeTerminal(app)
        // What it prints now fails with EIO: dropped, not a crash nor a loop.
        expect(await getJson(app.port, '/noisy')).toEqual({ noisy: true })
        expect(await getJson(app.port, '/noisy')).toEqual({ noisy: true })
        expect(await app.ended(300)).toBe('running')
        const slow = getJson(app.port, '/slow')
        await new Promise((r) => setTimeout(r, 300))
        app.send('kill SIGTERM')
        expect(await slow).toEqual({ slow: true })
        expect(await app.ended()).toEqual({ code: 0, signal: null })
      },
    )
  }

  it('ends with exit code 1 on an error the app leaves uncaught', { timeout: 60_000 }, async () => {
    const app = await serveOnPty([], false)
    await closeTerminal(app)
    expect(await getJson(app.port, '/throws')).toEqual({ answered: true })
    expect(await app.ended()).toEqual({ code: 1, signal: null })
  })
})

describe.skipIf(!HAS_PYTHON)('fw serve whose terminal hangs up (SIGHUP)', () => {
  for (const args of [[], ['--workers', '2']]) {
    const name = args.length ? ' (--workers 2)' : ''
    it(
      `drains as on SIGTERM: the request in flight is answered, then it exits 0${name}`,
      { timeout: 60_000 },
      async () => {
        const app = await serveOnPty(args, true)
        const slow = getJson(app.port, '/slow')
        await new Promise((r) => setTimeout(r, 300))
        await closeTerminal(app)
        expect(await slow).toEqual({ slow: true })
        expect(await app.ended()).toEqual({ code: 0, signal: null })
      },
    )
  }
})
