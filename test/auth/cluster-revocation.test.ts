/**
 * `--workers N` without Redis: the primary holds the revocation list and the workers ask it over
 * the node:cluster IPC channel, so a logout on one worker holds on all of them. This test process
 * is the primary (setupRevocationPrimary runs here) and forks real cluster workers: a bundled
 * script that makes the calls the test sends it, with ClusterRevocationList and with an Auth.
 */
import cluster, { type Worker } from 'node:cluster'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  REVOCATION_PRIMARY_ENV,
  setupRevocationPrimary,
} from '../../src/auth/cluster-revocation.js'
import { MemoryRevocationList } from '../../src/auth/revocation.js'
import { openDatabase } from '../../src/auth/stores/open.js'
import { REPO_ROOT } from '../support/project.js'

// Inside node_modules so the bundle's bare imports (jose, argon2, ...) resolve like the app's.
const OUT_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'fw-revocation-tests')

/** The worker: answers `{ test, call, args }` with `{ test, value }` or `{ test, error }`. */
const WORKER_SOURCE = `
import { ClusterRevocationList } from './src/auth/cluster-revocation.ts'
import { DurableRevocationList } from './src/auth/durable-revocation.ts'
import { createAuth } from './src/auth/auth.ts'
import { openDatabase } from './src/auth/stores/open.ts'

const list = new ClusterRevocationList({ timeoutMs: Number(process.env.TIMEOUT_MS || 1000) })
// An Auth with no revocation source, as fw serve's workers have without REDIS_URL.
const auth = createAuth({ secret: 'a-test-secret-of-at-least-32-bytes!!' })
// A durable list over the primary's, as fw serve's workers have with a database.
const durable = process.env.DATABASE_URL
  ? new DurableRevocationList({
      inner: list,
      store: async () => (await (db ??= openDatabase(process.env.DATABASE_URL))).revokedTokens,
    })
  : undefined
let db
const calls = {
  revoke: (jti, exp, subject) => list.revoke(jti, exp, subject),
  assertRoom: (jti, subject) => list.assertRoom(jti, subject),
  durableRevoke: (jti, exp, subject) => durable.revoke(jti, exp, subject),
  isRevoked: (jti) => list.isRevoked(jti),
  authKind: async () => (await auth.revocations()).constructor.name,
  authRevoke: async (jti, exp) => (await auth.revocations()).revoke(jti, exp),
  send: async (message) => void process.send(message),
  sendAndExit: async (message) => void process.send(message, () => process.exit(0)),
}
process.on('message', async (m) => {
  if (m?.test === undefined) return
  try {
    process.send({ test: m.test, value: await calls[m.call](...m.args) })
  } catch (error) {
    process.send({ test: m.test, error: error.name + ': ' + error.message })
  }
})
process.send({ ready: true })
`

interface Forked {
  worker: Worker
  call: (call: string, ...args: unknown[]) => Promise<unknown>
}

type Message = { ready?: true; test?: number; value?: unknown; error?: string } | null

const workers: Worker[] = []

/** Forks a worker of this (primary) process and waits until it listens for calls. */
async function fork(env: Record<string, string> = {}): Promise<Forked> {
  const worker = cluster.fork(env)
  workers.push(worker)
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let next = 0
  await new Promise<void>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`the worker exited with ${code}`)))
    worker.on('message', (message: Message) => {
      if (message?.ready) return resolve()
      const pending = message?.test === undefined ? undefined : waiting.get(message.test)
      if (!pending) return
      waiting.delete(message!.test!)
      if (message!.error === undefined) pending.resolve(message!.value)
      else pending.reject(new Error(message!.error))
    })
  })
  const call = (name: string, ...args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const test = ++next
      waiting.set(test, { resolve, reject })
      worker.send({ test, call: name, args })
    })
  return { worker, call }
}

/** The primary's clock, milliseconds: tests move it to expire entries. */
let clock = Date.now()
const inSeconds = (seconds: number): number => Math.floor(clock / 1000) + seconds

/** The primary's list refuses the jti 'refused', as a full one would. */
class RefusingList extends MemoryRevocationList {
  override async revoke(jti: string, expiresAt: number, subject?: string): Promise<boolean> {
    if (jti === 'refused') throw new Error('no room')
    return super.revoke(jti, expiresAt, subject)
  }
}

let script: string
let stop: () => void
let a: Forked
let b: Forked

beforeAll(async () => {
  mkdirSync(OUT_DIR, { recursive: true })
  script = join(OUT_DIR, `worker-${process.pid}.mjs`)
  await build({
    stdin: { contents: WORKER_SOURCE, loader: 'ts', resolveDir: REPO_ROOT },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: script,
    logLevel: 'error',
  })
  cluster.setupPrimary({ exec: script, execArgv: [] })
  stop = setupRevocationPrimary({
    list: new RefusingList({ maxPerSubject: 2, now: () => clock }),
  })
  ;[a, b] = await Promise.all([fork(), fork()])
})

afterAll(async () => {
  stop?.()
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((done) => {
          if (worker.isDead()) return done()
          worker.once('exit', () => done())
          worker.process.kill()
        }),
    ),
  )
  if (script) rmSync(script, { force: true })
})

describe('ClusterRevocationList across node:cluster workers', () => {
  it('sees in one worker what another revoked', async () => {
    expect(await b.call('isRevoked', 'seen')).toBe(false)
    expect(await a.call('revoke', 'seen', inSeconds(60))).toBe(true)
    expect(await b.call('isRevoked', 'seen')).toBe(true)
    expect(await b.call('isRevoked', 'SEEN')).toBe(true)
    expect(await b.call('revoke', 'seen', inSeconds(60))).toBe(false)
    expect(await a.call('isRevoked', 'other')).toBe(false)
  })

  it('of concurrent revokes of one jti from two workers, exactly one gets true', async () => {
    const jtis = Array.from({ length: 25 }, (_, i) => `race-${i}`)
    const outcomes = await Promise.all(
      jtis.map((jti) =>
        Promise.all([a.call('revoke', jti, inSeconds(60)), b.call('revoke', jti, inSeconds(60))]),
      ),
    )
    for (const pair of outcomes) expect(pair.sort()).toEqual([false, true])
  })

  it('forgets a jti when its token expires, and never lists an expired one', async () => {
    expect(await a.call('revoke', 'short', inSeconds(10))).toBe(true)
    expect(await b.call('isRevoked', 'short')).toBe(true)
    clock += 11_000
    expect(await b.call('isRevoked', 'short')).toBe(false)
    expect(await a.call('revoke', 'stale', inSeconds(-1))).toBe(true)
    expect(await b.call('isRevoked', 'stale')).toBe(false)
  })

  it("rejects when the primary's list refuses (the callers answer 503)", async () => {
    await expect(a.call('revoke', 'refused', inSeconds(60))).rejects.toThrow(
      'The primary failed a revocation call: no room',
    )
  })

  it("counts a subject's revocations from every worker against its one share", async () => {
    expect(await a.call('revoke', 'share-1', inSeconds(60), '7')).toBe(true)
    expect(await b.call('revoke', 'share-2', inSeconds(60), '7')).toBe(true)
    await expect(a.call('revoke', 'share-3', inSeconds(60), '7')).rejects.toThrow(/subject "7"/)
    expect(await b.call('revoke', 'share-4', inSeconds(60), '8')).toBe(true)
    expect(await a.call('isRevoked', 'share-3')).toBe(false)
  })

  it("asks the primary's list for room, and a refusal is a RevocationListFullError again", async () => {
    expect(await a.call('revoke', 'room-1', inSeconds(60), '21')).toBe(true)
    expect(await b.call('assertRoom', 'room-2', '21')).toBeUndefined()
    expect(await a.call('revoke', 'room-2', inSeconds(60), '21')).toBe(true)
    await expect(b.call('assertRoom', 'room-3', '21')).rejects.toThrow(
      'RevocationListFullError: The in-memory revocation list holds 2 unexpired tokens of subject "21"',
    )
    await expect(a.call('revoke', 'room-3', inSeconds(60), '21')).rejects.toThrow(
      /^RevocationListFullError: .* subject "21"/,
    )
    // Listed already is room enough; another subject has its own share.
    expect(await b.call('assertRoom', 'room-1', '21')).toBeUndefined()
    expect(await b.call('assertRoom', 'room-3', '22')).toBeUndefined()
  })

  it('writes to the database no revocation the primary refuses (a durable list in a worker)', async () => {
    const file = join(OUT_DIR, `revoked-${process.pid}.db`)
    rmSync(file, { force: true })
    const durable = await fork({ DATABASE_URL: `sqlite:${file}` })
    expect(await durable.call('durableRevoke', 'kept-1', inSeconds(60), '31')).toBe(true)
    expect(await durable.call('durableRevoke', 'kept-2', inSeconds(60), '31')).toBe(true)
    await expect(durable.call('durableRevoke', 'over', inSeconds(60), '31')).rejects.toThrow(
      /^RevocationListFullError: .* subject "31"/,
    )
    const db = await openDatabase(`sqlite:${file}`)
    try {
      const rows = await db.revokedTokens!.live(Math.floor(clock / 1000))
      expect(rows.map((row) => row.jti).sort()).toEqual(['kept-1', 'kept-2'])
    } finally {
      await db.close()
      rmSync(file, { force: true })
    }
  })

  it('is what an Auth without a revocation source uses in a worker whose primary answers', async () => {
    expect(await a.call('authKind')).toBe('ClusterRevocationList')
    expect(await a.call('authRevoke', 'via-auth', inSeconds(60))).toBe(true)
    expect(await b.call('authRevoke', 'via-auth', inSeconds(60))).toBe(false)
    expect(await b.call('isRevoked', 'via-auth')).toBe(true)
    // Without the primary's marker, a worker keeps its own list.
    const alone = await fork({ [REVOCATION_PRIMARY_ENV]: '' })
    expect(await alone.call('authKind')).toBe('MemoryRevocationList')
  })

  it('ignores malformed and foreign messages, and survives a worker that died waiting', async () => {
    const call = { tag: 'fw:revocation', from: 'nobody', id: 1 }
    for (const message of [
      { ...call, op: 'revoke', jti: 'bad' }, // no expiry
      { ...call, op: 'revoke', jti: 'bad', expiresAt: 'soon' },
      { ...call, op: 'forget', jti: 'bad' },
      { ...call, op: 'isRevoked', jti: 42 },
      { tag: 'fw:revocation' },
      { tag: 'something-else', op: 'revoke', jti: 'bad', expiresAt: inSeconds(60) },
      'fw:revocation',
    ])
      await a.call('send', message)
    // A reply meant for another worker's list is not taken for an answer.
    a.worker.send({ tag: 'fw:revocation', op: 'reply', to: 'nobody', id: 1, result: true })
    // A worker that exits right after asking gets no reply, and the primary keeps answering.
    const dying = await fork()
    const exited = new Promise((done) => dying.worker.once('exit', done))
    void dying.call('sendAndExit', {
      ...call,
      op: 'revoke',
      jti: 'orphan',
      expiresAt: inSeconds(60),
    })
    await exited
    expect(await a.call('isRevoked', 'bad')).toBe(false)
    expect(await b.call('isRevoked', 'seen')).toBe(true)
  })

  it('rejects after its timeout when no primary answers', async () => {
    const slow = await fork({ TIMEOUT_MS: '200' })
    stop()
    await expect(slow.call('isRevoked', 'seen')).rejects.toThrow(
      'The primary did not answer a revocation call within 200 ms',
    )
    await expect(slow.call('revoke', 'seen', inSeconds(60))).rejects.toThrow(/within 200 ms/)
  })
})
