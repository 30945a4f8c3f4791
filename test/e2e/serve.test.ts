/**
 * `fw serve` as an operator uses it: --watch reloads without dropping the server, --workers
 * shares one port and replaces a crashed worker, SIGTERM drains in-flight requests, and a port
 * in use is one clear error line.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SignJWT } from 'jose'
import { POSTGRES_URL, REDIS_URL, reachable } from '../auth/support.js'
import { assertBuilt, cleanupProjects, lines, makeProject, runFw } from '../support/project.js'
import { serveApp } from '../support/server.js'

const ROUTES = (extra = ''): string => `export default (r) => {
  r.get('/hello', () => ({ hello: 'world' }), 'hello')
  r.get('/slow', () => new Promise((done) => setTimeout(() => done({ slow: true }), 600)), 'slow')
  r.get('/crash', () => { setImmediate(() => process.exit(3)); return { bye: true } }, 'crash')
  ${extra}
}
`

afterAll(cleanupProjects)

/** Whether a new connection to `port` is refused (the server has stopped listening). */
const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('error', () => resolve(true))
  })

const waitFor = async (
  check: () => boolean | Promise<boolean>,
  output: () => string,
  ms = 40_000,
): Promise<void> => {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out; server output:\n${output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('fw serve', () => {
  it('reloads changed routes with --watch, keeping the same port', async () => {
    assertBuilt()
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs', '--watch'], { cwd: dir })
    try {
      expect((await fetch(`${app.url}/new`)).status).toBe(404)
      writeFileSync(
        join(dir, 'routes.mjs'),
        ROUTES("r.get('/new', () => ({ fresh: true }), 'new')"),
      )
      await waitFor(
        () => /reloaded 4 routes \(changed: .*routes\.mjs\)/.test(app.output()),
        app.output,
      )
      expect(await (await fetch(`${app.url}/new`)).json()).toEqual({ fresh: true })
      writeFileSync(join(dir, 'routes.mjs'), ROUTES("r.get('/new', () => 1, 'hello')"))
      await waitFor(() => /FW_NAME_DUPLICATE/.test(app.output()), app.output)
      expect(await (await fetch(`${app.url}/new`)).json()).toEqual({ fresh: true })
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('drains an in-flight request on SIGTERM, then exits 0', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: dir })
    const slow = fetch(`${app.url}/slow`)
    await new Promise((r) => setTimeout(r, 150))
    const exited = app.stop()
    expect(await (await slow).json()).toEqual({ slow: true })
    expect(await exited).toBe(0)
  })

  it('with --watch and --workers, rebuilds once in the primary, and every worker serves the new routes', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2', '--watch'], {
      cwd: dir,
    })
    try {
      expect(app.output()).toMatch(/\(3 routes, development, 2 workers, watching\)/)
      writeFileSync(
        join(dir, 'routes.mjs'),
        ROUTES("r.get('/new', () => ({ fresh: true }), 'new')"),
      )
      await waitFor(
        () => /reloaded 4 routes \(changed: .*routes\.mjs\)/.test(app.output()),
        app.output,
      )
      // Many connections at once: the primary hands them to both workers.
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`${app.url}/new`).then((r) => r.status)),
      )
      expect(
        statuses.every((status) => status === 200),
        app.output(),
      ).toBe(true)
      await new Promise((r) => setTimeout(r, 500))
      expect(app.output().match(/reloaded/g), app.output()).toHaveLength(1)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('runs N workers on one port and replaces one that crashes', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2', '--port', '0'], {
      cwd: dir,
    })
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${app.url}/hello`).then((r) => r.json() as Promise<{ hello: string }>),
        ),
      )
      expect(answers.every((a) => a.hello === 'world')).toBe(true)
      // The primary's children are exactly the two workers (esbuild's service was stopped).
      const workers = execFileSync('pgrep', ['-P', String(app.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
      expect(workers, app.output()).toHaveLength(2)
      process.kill(Number(workers[0]), 'SIGKILL')
      await waitFor(
        () => /worker exited \(SIGKILL\); starting another/.test(app.output()),
        app.output,
      )
      await waitFor(
        async () =>
          await fetch(`${app.url}/hello`).then(
            (r) => r.ok,
            () => false,
          ),
        app.output,
      )
      // Every worker gone at once: the replacements listen on the port the banner named (the
      // server was started with --port 0, and a new listen(0) would pick another).
      await waitFor(
        () =>
          execFileSync('pgrep', ['-P', String(app.pid)], { encoding: 'utf8' })
            .trim()
            .split('\n').length === 2,
        app.output,
      )
      for (const pid of execFileSync('pgrep', ['-P', String(app.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n'))
        process.kill(Number(pid), 'SIGKILL')
      await waitFor(
        () => app.output().match(/worker exited \(SIGKILL\)/g)!.length === 3,
        app.output,
      )
      await waitFor(
        async () =>
          await fetch(`${app.url}/hello`).then(
            (r) => r.ok,
            () => false,
          ),
        app.output,
      )
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)

  it('with --workers, waits longer before each restart of workers that keep crashing soon after start', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2'], { cwd: dir })
    try {
      for (let crashes = 1; crashes <= 3; crashes++) {
        await waitFor(
          async () =>
            await fetch(`${app.url}/hello`).then(
              (r) => r.ok,
              () => false,
            ),
          app.output,
        )
        await fetch(`${app.url}/crash`).catch(() => undefined)
        await waitFor(
          () => (app.output().match(/worker exited \(3\)/g) ?? []).length === crashes,
          app.output,
        )
      }
      expect(app.output()).toMatch(
        /worker exited \(3\); starting another in 0\.1 s\n[^]*in 0\.2 s\n[^]*in 0\.4 s\n/,
      )
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 60_000)

  it('with --workers, stops at a port in use: the error once, nothing more, then exit 1 (no worker left, no retry loop)', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: dir })
    try {
      const second = await runFw(
        ['serve', '--routes', 'routes.mjs', '--workers', '2', '--port', String(app.port)],
        { cwd: dir },
      )
      expect(second.code).toBe(1)
      expect(second.stderr.match(/is already in use \[FW_SERVE_PORT\]/g)).toHaveLength(1)
      // The worker's error is the only one: a second, vaguer one from the primary (FW_SERVE_WORKER)
      // was printed after it until a CLI audit counted two errors for one cause.
      expect(second.stderr.match(/^error /gm)).toHaveLength(1)
      expect(second.stderr).not.toMatch(/\n\s+at /)
    } finally {
      await app.stop()
    }
  }, 60_000)

  it('reports a port in use as one error line with a hint, exit 1', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: dir })
    try {
      const second = await runFw(['serve', '--routes', 'routes.mjs', '--port', String(app.port)], {
        cwd: dir,
      })
      expect(second.code).toBe(1)
      expect(second.stderr).toMatch(
        new RegExp(
          `error Port ${app.port} on 127\\.0\\.0\\.1 is already in use \\[FW_SERVE_PORT\\]`,
        ),
      )
      expect(second.stderr).toMatch(/hint: .*--port/)
      expect(second.stderr).not.toMatch(/\n\s+at /)
    } finally {
      await app.stop()
    }
  })

  // 10.255.255.1 is on no interface of the test machine; .invalid names never resolve (RFC 2606).
  it.each([
    [
      "an address that is not this machine's (EADDRNOTAVAIL)",
      '10.255.255.1',
      /error Cannot listen on 10\.255\.255\.1:0: 10\.255\.255\.1 is not an address of this machine \(EADDRNOTAVAIL\) \[FW_SERVE_HOST\]/,
    ],
    [
      'a host name that does not resolve (ENOTFOUND)',
      'nonexistent.invalid',
      /error Cannot listen on nonexistent\.invalid:0: the host name nonexistent\.invalid (is not known \(ENOTFOUND\)|cannot be looked up now \(EAI_AGAIN\)) \[FW_SERVE_HOST\]/,
    ],
  ])('reports --host with %s as one error line with a hint, exit 1', async (_what, host, error) => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const result = await runFw(['serve', '--routes', 'routes.mjs', '--port', '0', '--host', host], {
      cwd: dir,
    })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(error)
    expect(result.stderr).toMatch(/hint: .*use 127\.0\.0\.1 .*0\.0\.0\.0 .*one of its addresses/)
    expect(result.stderr).not.toMatch(/bug in fw/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it("with --workers, reports a host that is not this machine's as a user error from the worker, and only that", async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const result = await runFw(
      [
        'serve',
        '--routes',
        'routes.mjs',
        '--workers',
        '2',
        '--port',
        '4517',
        '--host',
        '10.255.255.1',
      ],
      { cwd: dir },
    )
    expect(result.code).toBe(1)
    expect(
      result.stderr.match(
        /10\.255\.255\.1 is not an address of this machine \(EADDRNOTAVAIL\) \[FW_SERVE_HOST\]/g,
      ),
    ).toHaveLength(1)
    expect(result.stderr.match(/^error /gm)).toHaveLength(1)
    expect(result.stderr).not.toMatch(/bug in fw/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  }, 60_000)

  // Number() would take all of these (0x1100 is 4352; '' and ' ' are 0, a random port).
  it.each([
    ['--port', '0x1100', '--port 0x1100 is not a port number'],
    ['--port', '', "--port '' is not a port number"],
    ['--port', ' 80', "--port ' 80' is not a port number"],
    ['--port', '1e3', '--port 1e3 is not a port number'],
    ['--port', '65536', '--port 65536 is not a port number'],
    ['--workers', '0x2', '--workers 0x2 is not a worker count'],
    ['--workers', '2.0', '--workers 2.0 is not a worker count'],
  ])('refuses %s %j: decimal numbers only', async (flag, value, message) => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const result = await runFw(['serve', '--routes', 'routes.mjs', flag, value], { cwd: dir })
    expect(result.code, result.stdout + result.stderr).toBe(1)
    expect(lines(result.stderr)).toEqual([
      `error ${message} [FW_SERVE_CONFIG]`,
      expect.stringMatching(/^ {2}hint: .*decimal/),
    ])
  })

  it('names PORT=abc, not --port, when the bad port came from the environment', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const result = await runFw(['serve', '--routes', 'routes.mjs'], {
      cwd: dir,
      env: { PORT: 'abc' },
    })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error PORT=abc is not a port number [FW_SERVE_CONFIG]',
      expect.stringMatching(/^ {2}hint: PORT comes from the environment/),
    ])
  })

  it('names fw.config.ts when the bad PORT came from it', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.ts': "export default { env: { PORT: '80a' } }\n",
    })
    const result = await runFw(['serve', '--routes', 'routes.mjs'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error fw.config.ts:1:25: PORT=80a (from fw.config.ts) is not a port number [FW_SERVE_CONFIG]',
      expect.stringMatching(/^ {2}hint: Set PORT in fw\.config\.ts/),
    ])
  })

  it('refuses an empty --host (Node would listen on every interface)', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    const result = await runFw(['serve', '--routes', 'routes.mjs', '--host', ''], { cwd: dir })
    expect(result.code).toBe(1)
    expect(lines(result.stderr)).toEqual([
      'error --host is empty [FW_SERVE_CONFIG]',
      expect.stringMatching(/^ {2}hint: Use 127\.0\.0\.1/),
    ])
  })

  it('takes an empty PORT as unset: port 3000, not a random one', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    // An address the machine does not have: the error names the port tried, and nothing listens.
    const result = await runFw(['serve', '--routes', 'routes.mjs', '--host', '10.255.255.1'], {
      cwd: dir,
      env: { PORT: '' },
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/error Cannot listen on 10\.255\.255\.1:3000: /)
  })

  it('says "1 route" in the banner and after a --watch reload', async () => {
    const one = (path: string): string =>
      `export default (r) => {\n  r.get('${path}', () => 'one', 'one')\n}\n`
    const dir = makeProject({ 'routes.mjs': one('/a') })
    const app = await serveApp(['--routes', 'routes.mjs', '--watch'], { cwd: dir })
    try {
      expect(app.output()).toMatch(/fw serve → \S+ {2}\(1 route, \w+, watching\)/)
      // The banner comes once the watcher is ready: a change made at once is seen.
      writeFileSync(join(dir, 'routes.mjs'), one('/b'))
      await waitFor(
        () => /reloaded 1 route \(changed: .*routes\.mjs\)/.test(app.output()),
        app.output,
        20_000,
      )
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
    expect(app.output()).not.toMatch(/cut off/)
  }, 60_000)

  it('cuts off a request still running 10 s after SIGTERM, says so in one warning line, then exits 0', async () => {
    // Never answers, and holds no timer: the process can exit once the connection is closed.
    const dir = makeProject({
      'routes.mjs': ROUTES(
        "r.get('/hang', () => { console.log('hang started'); return new Promise(() => {}) }, 'hang')",
      ),
    })
    const app = await serveApp(['--routes', 'routes.mjs'], { cwd: dir })
    let settled = false
    const hanging = fetch(`${app.url}/hang`).then(
      () => 'answered',
      () => 'cut off',
    )
    void hanging.then(() => (settled = true))
    await waitFor(() => app.output().includes('hang started'), app.output)
    const stopping = app.stop()
    // Not cut off at the signal: once the server has stopped taking connections, it still runs.
    await waitFor(() => refused(app.port), app.output)
    expect(settled).toBe(false)
    expect(await stopping, app.output()).toBe(0)
    expect(await hanging).toBe('cut off')
    expect(
      app
        .output()
        .match(/cut off the in-flight requests still running 10 s after the stop signal/g),
    ).toHaveLength(1)
  }, 30_000)
})

describe('fw serve logs', () => {
  const failing = `r.get('/fail', () => { throw new Error('database unreachable') }, 'fail')`

  it('are readable lines with LOG_FORMAT=pretty (the default in development on a terminal): an error and its stack', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES(failing) })
    const app = await serveApp(['--routes', 'routes.mjs'], {
      cwd: dir,
      env: { LOG_FORMAT: 'pretty', LOG_LEVEL: 'error' },
    })
    try {
      expect((await fetch(`${app.url}/fail`)).status).toBe(500)
      await waitFor(() => app.output().includes('database unreachable'), app.output)
      expect(app.output()).toMatch(/\d\d:\d\d:\d\d ERROR .*err=database unreachable/)
      expect(app.output()).toMatch(/\n {4}Error: database unreachable\n {4}\s+at /)
      expect(app.output()).not.toContain('"level"')
    } finally {
      await app.stop()
    }
  })

  it('are pino JSON lines when the output is not a terminal', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES(failing) })
    const app = await serveApp(['--routes', 'routes.mjs'], {
      cwd: dir,
      env: { LOG_LEVEL: 'error' },
    })
    try {
      expect((await fetch(`${app.url}/fail`)).status).toBe(500)
      await waitFor(() => app.output().includes('database unreachable'), app.output)
      const line = app
        .output()
        .split('\n')
        .find((l) => l.includes('database unreachable'))!
      expect(JSON.parse(line)).toMatchObject({
        level: 50,
        err: { message: 'database unreachable' },
      })
    } finally {
      await app.stop()
    }
  })
})

describe('fw serve in production', () => {
  it('refuses to start without a JWT_SECRET of at least 32 bytes', async () => {
    const dir = makeProject({ 'routes.mjs': ROUTES() })
    for (const secret of ['', 'too-short']) {
      const result = await runFw(['serve', '--routes', 'routes.mjs', '--port', '0'], {
        cwd: dir,
        env: { APP_ENV: 'production', JWT_SECRET: secret },
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(
        /error JWT_SECRET is (not set|only 9 bytes); production needs at least 32 bytes \[FW_SERVE_CONFIG\]/,
      )
      expect(result.stderr).toMatch(/hint: Set JWT_SECRET/)
    }
  })

  it('takes APP_ENV and JWT_SECRET from fw.config.ts, over the environment', async () => {
    const refused = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.mjs': `export default { routes: 'routes.mjs', APP_ENV: 'production' }\n`,
    })
    const result = await runFw(['serve', '--port', '0'], {
      cwd: refused,
      env: { APP_ENV: 'development', JWT_SECRET: '' },
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /error JWT_SECRET is not set; production needs at least 32 bytes \[FW_SERVE_CONFIG\]/,
    )

    const dir = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.mjs': `export default { routes: 'routes.mjs', env: { APP_ENV: 'production', JWT_SECRET: '${'s'.repeat(40)}' } }\n`,
    })
    const app = await serveApp(['--port', '0'], {
      cwd: dir,
      env: { APP_ENV: 'development', JWT_SECRET: '' },
    })
    try {
      expect(app.output()).toMatch(/\(3 routes, production\)/)
      // Production redirects plain HTTP to HTTPS.
      const answer = await fetch(`${app.url}/hello`, { redirect: 'manual' })
      expect(answer.status).toBe(301)
      expect(answer.headers.get('location')).toMatch(/^https:\/\/127\.0\.0\.1(:\d+)?\/hello$/)
    } finally {
      await app.stop()
    }
  })

  it("also refuses when production comes from the config's kernel options", async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.mjs': `export default { routes: 'routes.mjs', kernel: { env: 'production' } }\n`,
    })
    const result = await runFw(['serve', '--port', '0'], { cwd: dir, env: { JWT_SECRET: '' } })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /error JWT_SECRET is not set; production needs at least 32 bytes \[FW_SERVE_CONFIG\]/,
    )
  })
})

describe('a broken fw.config', () => {
  it('is one error line naming the config file and line, exit 1, no stack', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.mjs': `const port = 3000\nthrow new Error('cfg boom')\nexport default { port }\n`,
    })
    const result = await runFw(['serve', '--port', '0'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /error fw\.config\.mjs:2:\d+: The config file threw while it was loaded: cfg boom \[FW_CONFIG_INVALID\]/,
    )
    expect(result.stderr).toMatch(/hint: Fix fw\.config\.mjs/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('is refused when its default export is not an object', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES(),
      'fw.config.mjs': `export default 'routes.mjs'\n`,
    })
    const result = await runFw(['route:cache', 'build'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /error fw\.config\.mjs:1:1: The config file must export an object as its default export, not "routes.mjs" \[FW_CONFIG_INVALID\]/,
    )
  })
})

// In CI both services must be there (reachable() is then always true: the test runs and fails).
const SERVICES = (await reachable(POSTGRES_URL)) && (await reachable(REDIS_URL))

describe('fw serve with the example app', () => {
  it.runIf(SERVICES)(
    'closes its PostgreSQL and Redis connections on SIGTERM and exits on its own',
    async () => {
      const secret = 'e2e-shutdown-secret-'.padEnd(40, 'x')
      const app = await serveApp(
        ['--routes', 'routes.example.ts', '--cache', join(makeProject(), 'cache')],
        {
          env: { DATABASE_URL: POSTGRES_URL, REDIS_URL, JWT_SECRET: secret, APP_URL: '' },
        },
      )
      try {
        // A failed login reads the user store (PostgreSQL) and counts against the throttle (Redis);
        // a well-signed token for an unknown user is checked against the revocation list (Redis).
        // Logins are throttled 5 per 300 s per client in Redis, which outlives this test: each run
        // comes from an address of its own (X-Forwarded-For, honoured from loopback), or the sixth
        // run within five minutes would get a 429.
        const now = Date.now()
        const client = `10.${(now >> 16) & 255}.${(now >> 8) & 255}.${now & 255}`
        const login = await fetch(`${app.url}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
          body: JSON.stringify({ email: 'nobody-e2e@example.com', password: 'not the password' }),
        })
        expect(login.status).toBe(401)
        const token = await new SignJWT({ jti: 'a'.repeat(32) })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('987654321')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(secret))
        const me = await fetch(`${app.url}/auth/me`, {
          headers: { authorization: `Bearer ${token}` },
        })
        expect([401, 404]).toContain(me.status)
      } finally {
        expect(await app.stop()).toBe(0)
      }
      // Exited because nothing was left open, not by the 5 s fallback.
      expect(app.output()).not.toMatch(/still open 5 s after the drain/)
    },
    60_000,
  )

  it('shares one random JWT_SECRET among --workers in development, so signed URLs verify on any worker', async () => {
    const app = await serveApp(
      ['--routes', 'routes.example.ts', '--cache', join(makeProject(), 'cache'), '--workers', '2'],
      {
        env: { JWT_SECRET: '', URL_SIGNING_KEYS: '', APP_ENV: 'development' },
      },
    )
    try {
      expect(app.output()).toMatch(/JWT_SECRET is not set: the workers share a random one/)
      const { url } = (await (await fetch(`${app.url}/demo/sign/9`)).json()) as { url: string }
      // Fresh connections, so the requests spread over both workers.
      const statuses = await Promise.all(
        Array.from({ length: 12 }, () =>
          fetch(`${app.url}${url}`, { headers: { connection: 'close' } }).then((r) => r.status),
        ),
      )
      expect(statuses).toEqual(Array.from({ length: 12 }, () => 200))
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)
})
