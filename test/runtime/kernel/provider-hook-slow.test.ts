/**
 * A service provider whose register() or boot() never settles (a database that accepts the
 * connection and never answers) hung Kernel.boot, and so `fw serve`, without a word. Past 10 s the
 * log now names the provider and the hook; the boot still waits for it, as it must.
 */
import { afterAll, describe, expect, it, vi } from 'vitest'
import { PROVIDER_SLOW_MS } from '../../../src/runtime/kernel-providers.js'
import { bootKernel, call, captureLogger, cleanupTempDirs } from './support.js'

afterAll(cleanupTempDirs)

class DatabaseProvider {
  static finish: (() => void) | undefined
  boot(): Promise<void> {
    return new Promise((resolve) => (DatabaseProvider.finish = resolve))
  }
}

describe('a provider hook that takes long', () => {
  it('is named in the log after 10 s, and the boot goes on once it settles', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const log = captureLogger()
      const booting = bootKernel((r) => r.get('/', () => 'ok'), {
        log,
        serviceProviders: [{ register: () => {} }, DatabaseProvider],
      })
      // The cache is built and read first (real I/O); setImmediate is not faked.
      while (DatabaseProvider.finish === undefined) await new Promise(setImmediate)
      await vi.advanceTimersByTimeAsync(PROVIDER_SLOW_MS - 1)
      expect(log.lines.filter((line) => line.level === 'warn')).toEqual([])
      await vi.advanceTimersByTimeAsync(1)
      expect(log.lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toEqual([
        'serviceProviders[1] (DatabaseProvider) has not finished boot() after 10 s: the kernel waits for it',
      ])
      DatabaseProvider.finish!()
      const kernel = await booting
      expect((await call(kernel, '/')).status).toBe(200)
    } finally {
      vi.useRealTimers()
    }
  })
})
