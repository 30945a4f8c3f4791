/** Spawning the bundled `fixtures/serve.ts` and talking HTTP to it. */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { build } from 'esbuild'
import { REPO_ROOT } from '../support/project.js'

// Inside node_modules so the bundle's bare imports (ioredis, pino, ...) resolve like the app's.
const OUT_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'fw-throttle-tests')

/** Bundles `fixtures/serve.ts` (our TypeScript sources) into one runnable .mjs file. */
export async function bundleServeFixture(): Promise<string> {
  mkdirSync(OUT_DIR, { recursive: true })
  const outfile = join(OUT_DIR, `serve-${process.pid}.mjs`)
  await build({
    entryPoints: [join(REPO_ROOT, 'test/throttle/fixtures/serve.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'error',
  })
  return outfile
}

export interface Spawned {
  port: number
  output: () => string
  stop: () => Promise<void>
}

/** Runs the bundled server with `env`; resolves on its `ready <port>` (or `refused ...`) line. */
export function spawnServer(
  script: string,
  env: Record<string, string>,
): Promise<Spawned & { refused?: string }> {
  const child: ChildProcess = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  const stop = (): Promise<void> =>
    new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done()
      child.once('exit', () => done())
      child.kill('SIGTERM')
    })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => void stop().then(() => reject(new Error(`server did not start:\n${text}`))),
      20_000,
    )
    const onData = (chunk: Buffer): void => {
      text += chunk.toString()
      const ready = /^ready (\d+)$/m.exec(text)
      const refused = /^refused (.*)$/m.exec(text)
      if (!ready && !refused) return
      clearTimeout(timer)
      resolve({
        port: ready ? Number(ready[1]) : 0,
        output: () => text,
        stop,
        ...(refused ? { refused: refused[1]! } : {}),
      })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      if (!/^(ready|refused) /m.test(text))
        reject(new Error(`server exited with ${code}:\n${text}`))
    })
  })
}

/** One GET on a fresh connection (so a cluster spreads them over its workers). */
export function httpGet(
  port: number,
  path: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}
