// CPU pinning for the HTTP benchmark (Linux, `taskset`, 2+ CPUs): every server process on the
// last CPU, the load generator (this process) on the others. Unpinned, the scheduler moves both
// between this VM's cores, whose speeds differ, and a server's CPU per request swung ±40%
// between rounds; pinned, every server runs on the same core and rounds agree within ~5%.
// FW_BENCH_NO_PIN=1 turns it off.

import { execFileSync } from 'node:child_process'
import os from 'node:os'

const CPUS = os.availableParallelism()

function taskset(cpus, pid) {
  try {
    // -a: every thread of the process (libuv pool, GC helpers), and the threads it starts later.
    execFileSync('taskset', ['-a', '-pc', cpus, String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export const pinning = {
  enabled: CPUS >= 2 && process.platform === 'linux' && !process.env.FW_BENCH_NO_PIN,
  serverCpu: String(CPUS - 1),
  loadCpus: CPUS > 2 ? `0-${CPUS - 2}` : '0',
  allCpus: `0-${CPUS - 1}`,
}

/** Pins this process (the load generator) for the run; returns the function that unpins it. */
export function pinLoadGenerator() {
  if (!pinning.enabled || !taskset(pinning.loadCpus, process.pid)) {
    pinning.enabled = false
    return () => {}
  }
  return () => void taskset(pinning.allCpus, process.pid)
}

/** Pins a server process to the server CPU (a no-op when pinning is off). */
export function pinServer(pid) {
  if (pinning.enabled) taskset(pinning.serverCpu, pid)
}
