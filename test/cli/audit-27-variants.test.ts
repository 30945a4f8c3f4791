/**
 * Audit 27, serving variants: the scaffolded `server.mjs` on an IPv6 HOST (`::`, `::1`) printed
 * `listening on http://:::41234`, a URL no browser or curl takes (an IPv6 address goes in
 * brackets, as `fw serve` prints it), and named the address so in its listen errors too.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  assertBuilt,
  cleanupProjects,
  lines,
  makeProject,
  REPO_ROOT,
  runFw,
  runNode,
} from '../support/project.js'

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})
afterAll(() => cleanupProjects())

/** `fw init` into a fresh folder with this copy of fw linked, and its cache built. */
async function scaffold(): Promise<string> {
  assertBuilt()
  const dir = join(makeProject(), 'app')
  expect((await runFw(['init', dir], { cwd: REPO_ROOT })).code).toBe(0)
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'fw'), 'dir')
  expect((await runFw(['route:cache', 'build'], { cwd: dir })).code).toBe(0)
  return dir
}

/** The first line a child prints. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`no output: ${text}`)), 20_000)
    const onData = (chunk: Buffer): void => {
      text += chunk.toString()
      if (text.includes('\n')) {
        clearTimeout(timer)
        resolve(text.slice(0, text.indexOf('\n')))
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
  })
}

function getText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve(text))
    })
      .on('error', reject)
      .end()
  })
}

describe('the scaffolded server.mjs on IPv6', () => {
  it.each(['::1', '::'])('prints a URL that can be requested, HOST=%s', async (host) => {
    const dir = await scaffold()
    const child = spawn(process.execPath, [join(dir, 'server.mjs')], {
      cwd: dir,
      env: { ...process.env, HOST: host, PORT: '0', LOG_LEVEL: 'silent' },
    })
    children.push(child)
    const line = await firstLine(child)
    const found = /^listening on (\S+)$/.exec(line)
    expect(found, line).not.toBeNull()
    const url = new URL(found![1]!)
    expect(url.hostname).toBe(`[${host}]`)
    const reachable = host === '::' ? `http://[::1]:${url.port}/` : url.href
    expect(await getText(reachable)).toBe('{"hello":"world"}')
  })

  it('names an IPv6 address in brackets when the port is taken', async () => {
    const dir = await scaffold()
    const busy = createServer()
    await new Promise<void>((done) => busy.listen(0, '::1', done))
    try {
      const { port } = busy.address() as AddressInfo
      const result = await runNode([join(dir, 'server.mjs')], {
        cwd: dir,
        env: { HOST: '::1', PORT: String(port) },
      })
      expect(result.code).toBe(1)
      expect(lines(result.stderr)).toEqual([
        `error cannot listen on [::1]:${port}: listen EADDRINUSE: address already in use ::1:${port}`,
      ])
    } finally {
      busy.close()
    }
  })
})
