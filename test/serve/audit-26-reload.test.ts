/**
 * `fw serve --watch --workers N`: a worker that replaces a crashed one while an edit is built
 * must end up serving the new routes, as the others do, rather than miss the primary's reload.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, cleanupProjects, makeProject } from '../support/project.js'
import { serveApp, workerPids, type ServedApp } from '../support/server.js'

beforeAll(assertBuilt)
afterAll(cleanupProjects)

const ROUTES = `import { message } from './message.mjs'
export default (r) => {
  r.get('/message', () => ({ message, pid: process.pid }), 'message')
  r.get('/crash', () => { setImmediate(() => process.exit(3)); return { bye: true } }, 'crash')
}
`
const MESSAGE = (text: string): string => `export const message = ${JSON.stringify(text)}\n`
// While the file "hold" is there, the next worker to boot a kernel (after it read the cache) says
// so in "booting" and waits: the replacement worker is held between its routes' load and its listen.
const CONFIG = `import cluster from 'node:cluster'
import { existsSync, writeFileSync } from 'node:fs'
const hold = new URL('./hold', import.meta.url)
const booting = new URL('./booting', import.meta.url)
export default {
  kernel: {
    serviceProviders: [{
      boot: async () => {
        // The first worker to boot while held only (not the others' reloads).
        if (!cluster.isWorker || !existsSync(hold) || existsSync(booting)) return
        writeFileSync(booting, '')
        while (existsSync(hold)) await new Promise((done) => setTimeout(done, 20))
      },
    }],
  },
}
`

async function waitFor(check: () => boolean | Promise<boolean>, app: ServedApp): Promise<void> {
  const until = Date.now() + 40_000
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out; server output:\n${app.output()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** One GET on a fresh connection (so the cluster may give it to any worker). */
function getJson(url: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>))
    }).on('error', reject)
  })
}

describe('fw serve --watch --workers: a reload while a worker starts', () => {
  it('the replacement of a crashed worker serves the routes an edit made meanwhile', async () => {
    const dir = makeProject({
      'routes.mjs': ROUTES,
      'message.mjs': MESSAGE('first'),
      'fw.config.mjs': CONFIG,
    })
    const app = await serveApp(['--routes', 'routes.mjs', '--workers', '2', '--watch'], {
      cwd: dir,
    })
    try {
      const before = workerPids(app.pid)
      expect(before).toHaveLength(2)
      writeFileSync(join(dir, 'hold'), '')
      await getJson(`${app.url}/crash`)
      // The replacement has loaded the routes and the cache, and does not listen yet.
      await waitFor(() => existsSync(join(dir, 'booting')), app)
      writeFileSync(join(dir, 'message.mjs'), MESSAGE('second'))
      // The primary asks every worker at once: the one left answers with the new routes.
      await waitFor(async () => (await getJson(`${app.url}/message`)).message === 'second', app)
      rmSync(join(dir, 'hold'))
      await waitFor(() => /reloaded 2 routes/.test(app.output()), app)
      let answer: Record<string, unknown> | undefined
      await waitFor(async () => {
        answer = await getJson(`${app.url}/message`)
        return !before.includes(answer.pid as number)
      }, app)
      expect(answer!.message).toBe('second')
      expect(app.output()).not.toMatch(/has not loaded the new routes/)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 90_000)
})
