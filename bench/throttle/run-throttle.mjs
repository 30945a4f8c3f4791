// The throttle benchmark: time per throttle check of fw's stores and middleware and of the
// rate-limiter-flexible and express-rate-limit stores, each limiter in its own child process
// (child.mjs), all doing the same work (see limiters.mjs). Redis limiters use keys under a
// random prefix, deleted after each child (also when it crashed).

import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { distBuilt } from '../http/report.mjs'
import { LIMITERS } from './limiters.mjs'

const CHILD = join(import.meta.dirname, 'child.mjs')
const CHILD_TIMEOUT_MS = 60_000

// The benchmark's limit: high enough that nothing is refused, over CLIENTS addresses.
export const RULE = { max: 1_000_000, windowMs: 60_000 }
export const CLIENTS = 1000

export const clientAddresses = (count = CLIENTS) =>
  Array.from({ length: count }, (_, i) => `10.0.${i >> 8}.${i & 255}`)

export function throttleOptions({ quick = false, limiters } = {}) {
  const ids = limiters?.split(',')
  return {
    quick,
    redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    limiters: ids ? LIMITERS.filter((l) => ids.includes(l.id)) : LIMITERS,
  }
}

function runChild(config) {
  return new Promise((resolve) => {
    let message = null
    const child = fork(CHILD, [JSON.stringify(config)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    child.on('message', (m) => {
      message = m
      // Its work is done; leftover timers (a store's expiry timers) must not keep it alive.
      child.kill()
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      const error = `child exited (code ${code}, signal ${signal}) without a result`
      resolve(message ?? { ok: false, id: config.id, error })
    })
  })
}

async function connectRedis(url) {
  const { Redis } = await import('ioredis')
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    const info = await client.info('server')
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'
    return { client, version }
  } catch (error) {
    client.disconnect()
    return { client: null, error: error.message }
  }
}

// Deletes every key under `prefix`; returns how many.
async function deleteKeys(client, prefix) {
  let cursor = '0'
  let deleted = 0
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    if (keys.length) deleted += await client.unlink(...keys)
  } while (cursor !== '0')
  return deleted
}

export async function runThrottleBench(options) {
  const started = performance.now()
  const before = loadavg()
  const builtBefore = distBuilt()
  const needsRedis = options.limiters.some((l) => l.backend === 'redis')
  const redis = needsRedis ? await connectRedis(options.redisUrl) : { client: null }
  const prefix = `fwbench-${randomBytes(6).toString('hex')}:`
  const clients = clientAddresses()
  const runs = []
  let keysDeleted = 0
  try {
    for (const limiter of options.limiters) {
      let run
      if (limiter.backend === 'redis' && !redis.client) {
        run = {
          ok: false,
          id: limiter.id,
          error: `Redis at ${options.redisUrl} unreachable: ${redis.error}`,
        }
      } else {
        run = await runChild({
          id: limiter.id,
          quick: options.quick,
          prefix,
          redisUrl: options.redisUrl,
          clients,
          ...RULE,
        })
        if (limiter.backend === 'redis') keysDeleted += await deleteKeys(redis.client, prefix)
      }
      runs.push({ limiter, ...run })
      console.log(progressLine(limiter, run))
    }
  } finally {
    if (redis.client) {
      keysDeleted += await deleteKeys(redis.client, prefix)
      await redis.client.quit()
    }
  }
  return {
    options,
    runs,
    redis: {
      url: options.redisUrl,
      version: redis.version,
      error: redis.error,
      prefix,
      keysDeleted,
    },
    loadavg: { before, after: loadavg() },
    dist: { before: builtBefore, after: distBuilt() },
    elapsedS: (performance.now() - started) / 1000,
  }
}

function progressLine(limiter, run) {
  const text = !run.ok
    ? `error: ${String(run.error).split('\n')[0]}`
    : `${run.sequential.us.toFixed(3)} µs per check` +
      (run.concurrent
        ? `, ${run.concurrent.us.toFixed(3)} µs with ${run.concurrent.inFlight} in flight`
        : '')
  return `  ${limiter.label.padEnd(58)} ${text}`
}
