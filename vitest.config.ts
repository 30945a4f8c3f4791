import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: on a 2-core CI machine that ran the
    // files one at a time, though most of them wait on servers, child processes and timers
    // (2026-11-27: 711 s of vitest, CI at 14.9 min of its 15 on a slow VM).
    // Three: the suite spends most of its time waiting (CPU ~75% of 2 cores at two workers), and
    // CI had reached 14.1 of its 15 minutes on a slow VM (2026-11-28, 2,751 tests).
    maxWorkers: 3,
  },
})
