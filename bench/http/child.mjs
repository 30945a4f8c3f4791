// The parent's handle on one server process (server-child.mjs): start, CPU window, stop.

import { fork } from 'node:child_process'
import { join } from 'node:path'
import { pinServer } from './pin.mjs'

const CHILD = join(import.meta.dirname, 'server-child.mjs')
const START_TIMEOUT_MS = 30_000
const REPLY_TIMEOUT_MS = 10_000

// Every server runs as deployed: production env. fw refuses to boot in production without
// URL signing keys, so a fixed one is set (no route here signs or verifies anything).
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  APP_ENV: 'production',
  URL_SIGNING_KEYS: 'http-bench-signing-key',
}

export class ServerProcess {
  #child
  #waiting = new Map() // reply type → resolve
  #exited = null

  constructor(server, app, { options = {}, execArgv = [], env = {} } = {}) {
    this.server = server
    this.app = app
    this.port = null
    this.#child = fork(CHILD, [server.id, app, JSON.stringify(options)], {
      execArgv,
      env: { ...process.env, ...PRODUCTION_ENV, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.pid = this.#child.pid
    pinServer(this.pid)
    this.#child.on('message', (m) => {
      const resolve = this.#waiting.get(m.type)
      this.#waiting.delete(m.type)
      resolve?.(m)
    })
    this.#child.on('exit', (code, signal) => {
      this.#exited = `server process exited (code ${code}, signal ${signal})`
      for (const resolve of this.#waiting.values()) resolve({ type: 'exited' })
      this.#waiting.clear()
    })
  }

  #reply(type, timeoutMs) {
    if (this.#exited) return Promise.reject(new Error(this.#exited))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no '${type}' from the server`)), timeoutMs)
      this.#waiting.set(type, (m) => {
        clearTimeout(timer)
        m.type === 'exited' ? reject(new Error(this.#exited)) : resolve(m)
      })
    })
  }

  async ready() {
    const { port } = await this.#reply('ready', START_TIMEOUT_MS)
    this.port = port
    return port
  }

  async cpuStart() {
    const reply = this.#reply('cpu-started', REPLY_TIMEOUT_MS)
    this.#child.send({ type: 'cpu-start' })
    await reply
  }

  // µs of CPU (user + system, all threads) the server used since cpuStart().
  async cpuStop() {
    const reply = this.#reply('cpu', REPLY_TIMEOUT_MS)
    this.#child.send({ type: 'cpu-stop' })
    const { user, system } = await reply
    return { user, system }
  }

  // Asks the process to exit normally; kills it if it has not within 5 s.
  async stop() {
    if (this.#exited) return
    const exited = new Promise((resolve) => this.#child.once('exit', resolve))
    try {
      this.#child.send({ type: 'exit' })
    } catch {}
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }
}
